package lookup

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// ServeStdio answers newline-delimited JSON-RPC on r and w until r ends.
func (s *Server) ServeStdio(r io.Reader, w io.Writer) error {
	rd := jsonrpc.NewReader(r, MaxRequest)
	wr := jsonrpc.NewWriter(w)
	for {
		frame, err := rd.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, jsonrpc.ErrFrameTooLarge):
			if err := wr.Write(jsonrpc.NewError(nil, codeInvalidRequest, "request too large", nil)); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		if resp := s.Handle(frame); resp != nil {
			if err := wr.Write(resp); err != nil {
				return err
			}
		}
	}
}

// HTTPHandler serves Streamable HTTP (JSON responses, no streams) at
// /mcp for a server listening on 127.0.0.1:port. It refuses foreign Host
// and Origin headers (DNS rebinding), GET streams and bodies over
// MaxRequest.
func (s *Server) HTTPHandler(port int) http.Handler {
	p := strconv.Itoa(port)
	hosts := map[string]bool{"127.0.0.1:" + p: true, "localhost:" + p: true, "[::1]:" + p: true}
	origins := map[string]bool{"http://127.0.0.1:" + p: true, "http://localhost:" + p: true, "http://[::1]:" + p: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts[r.Host] {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !origins[o] {
			http.Error(w, "forbidden origin", http.StatusForbidden)
			return
		}
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "only POST", http.StatusMethodNotAllowed)
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequest+1))
		if err != nil || len(body) > MaxRequest {
			http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
			return
		}
		resp := s.Handle(body)
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(resp, '\n'))
	})
}

// ListenLoopback listens on 127.0.0.1:port; port 0 picks one.
func ListenLoopback(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}
