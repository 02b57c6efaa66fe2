// Command bridge is the floor `mcpseal gateway`'s command routes are
// measured against: a bare stdio-to-HTTP bridge. It starts one stdio
// server and serves it over the plainest Streamable HTTP that the go-sdk
// client accepts: every POST's body is written to the server as one line;
// a request (a method and an id) waits for the server's answer with the
// same id and gets it back as application/json; anything else gets 202.
// GET and DELETE get 405 (no standalone stream, no session ids). Messages
// the server sends on its own (notifications, requests) are dropped. It
// checks nothing: no Host, no Origin, no headers, no schemas.
//
//	bridge SERVER [ARGS...]
//
// It prints "bridge listening on http://127.0.0.1:PORT" to stderr when
// ready and serves until SIGTERM or SIGINT, then closes the server's stdin
// and waits for it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// maxBody bounds one request body and one server line: the gateway's
// default limit, so both floors carry the same messages.
const maxBody = 16 << 20

type bridge struct {
	wmu sync.Mutex // serialises lines to the server
	in  io.WriteCloser

	mu      sync.Mutex
	pending map[string]chan []byte // by the request id's exact bytes
}

// envelope is what the bridge reads of a message: enough to pair answers
// with requests.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bridge SERVER [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	b := &bridge{in: in, pending: map[string]chan []byte{}}
	go b.readServer(out)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	srv := &http.Server{Handler: b}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "bridge listening on http://%s\n", l.Addr())
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fatal(err)
	}
	in.Close()
	_ = cmd.Wait()
}

func (b *bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if bytes.IndexByte(body, '\n') >= 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = c.Bytes()
	}
	isRequest := env.Method != "" && len(env.ID) > 0 && string(env.ID) != "null"
	var ch chan []byte
	if isRequest {
		ch = make(chan []byte, 1)
		b.mu.Lock()
		b.pending[string(env.ID)] = ch
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.pending, string(env.ID))
			b.mu.Unlock()
		}()
	}
	b.wmu.Lock()
	_, err = b.in.Write(append(body, '\n'))
	b.wmu.Unlock()
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	if !isRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case answer := <-ch:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	case <-r.Context().Done():
	}
}

// readServer hands each answer the server writes to the request waiting
// for it, and drops everything else.
func (b *bridge) readServer(out io.Reader) {
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > maxBody {
			fatal(fmt.Errorf("server line over %d bytes", maxBody))
		}
		if len(line) > 0 {
			var env envelope
			if json.Unmarshal(line, &env) == nil && env.Method == "" && len(env.ID) > 0 {
				b.mu.Lock()
				ch := b.pending[string(env.ID)]
				b.mu.Unlock()
				if ch != nil {
					select {
					case ch <- line:
					default:
					}
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bridge:", err)
	os.Exit(1)
}
