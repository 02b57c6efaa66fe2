package testmcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrCrash is returned by Serve when the scenario crashed on purpose.
var ErrCrash = errors.New("testmcp: crashed on purpose")

// maxLine bounds one received line. Why 64 MiB: four times mcpseal's
// default frame limit, so tests can send frames above that limit to the
// proxy and still see what (if anything) the proxy forwarded.
const maxLine = 64 << 20

// JSON-RPC and MCP error codes the server answers with.
const (
	codeParse              = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeUnsupportedVersion = -32022
)

// Server plays one Scenario over one connection.
type Server struct {
	sc      *Scenario
	session int

	mu          sync.Mutex
	received    [][]byte
	rec         *os.File
	listings    map[string]int // kind -> listings started this session
	handshakes  int            // initialize and server/discover requests
	initialized bool
	initCaps    map[string]json.RawMessage
	// ownPrefix and ownN are the last request id of the form PREFIX-N
	// (a JSON string) received: a proxy's own requests (see Spoof).
	ownPrefix string
	ownN      int

	wmu sync.Mutex
	out io.Writer
	wg  sync.WaitGroup
}

// NewServer validates sc and settles its session number (incrementing the
// session counter when the scenario keeps one).
func NewServer(sc *Scenario) (*Server, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	s := &Server{sc: sc, session: sc.Session, listings: map[string]int{}}
	if s.session == 0 {
		dir := sc.StateDir
		if dir == "" {
			dir = os.Getenv(StateDirEnv)
		}
		if dir == "" {
			s.session = 1
		} else {
			n, err := NextSession(dir)
			if err != nil {
				return nil, err
			}
			s.session = n
		}
	}
	return s, nil
}

// Serve plays sc on in and out until in ends or ctx is done. It returns
// nil at end of input, ErrCrash when the scenario crashed on purpose, or
// the first read or write error.
func Serve(ctx context.Context, sc *Scenario, in io.Reader, out io.Writer) error {
	s, err := NewServer(sc)
	if err != nil {
		return err
	}
	return s.Serve(ctx, in, out)
}

// Session is this server's session number (1-based).
func (s *Server) Session() int { return s.session }

// Received returns a copy of every line received so far, without its
// line ending, in order.
func (s *Server) Received() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.received))
	for i, b := range s.received {
		out[i] = bytes.Clone(b)
	}
	return out
}

// ReceivedMethods returns the method of every received message that has
// one, in order.
func (s *Server) ReceivedMethods() []string {
	var out []string
	for _, b := range s.Received() {
		if m := methodOf(b); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Serve plays the scenario on in and out; see the package function.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = out
	if s.sc.RecordFile != "" {
		f, err := os.OpenFile(s.sc.RecordFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		s.rec = f
		defer f.Close()
	}
	for _, l := range s.sc.Banner {
		if err := s.writeRaw([]byte(l + "\n")); err != nil {
			return err
		}
	}

	type readResult struct {
		line []byte
		err  error
	}
	lines := make(chan readResult)
	done := make(chan struct{})
	defer close(done)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br)
			if len(line) > 0 || err != nil {
				select {
				case lines <- readResult{line, err}:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r := <-lines:
			if len(r.line) > 0 {
				if err := s.handle(r.line); err != nil {
					return err
				}
			}
			if r.err != nil {
				s.wg.Wait()
				if r.err == io.EOF {
					return nil
				}
				return r.err
			}
		}
	}
}

// readLine reads one line without its ending, up to maxLine bytes; the
// rest of a longer line is discarded.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, err
	}
}

func (s *Server) record(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received = append(s.received, bytes.Clone(line))
	if s.rec != nil {
		b, _ := json.Marshal(Record{Session: s.session, Message: string(line)})
		_, _ = s.rec.Write(append(b, '\n'))
	}
}

// envelope is the part of a message the server reads.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func methodOf(line []byte) string {
	var e envelope
	if json.Unmarshal(line, &e) != nil {
		return ""
	}
	return e.Method
}

// reply is what the server sends for one request.
type reply struct {
	result   []byte
	err      *RPCError
	stream   int      // > 0: a tools/call result with a text of this many bytes
	after    [][]byte // messages sent right after the reply
	noAnswer bool
}

func (s *Server) handle(line []byte) error {
	s.record(line)
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	if t[0] == '[' {
		return s.send([]byte("null"), reply{err: &RPCError{Code: codeInvalidRequest, Message: "batches are not supported"}})
	}
	var e envelope
	if err := json.Unmarshal(t, &e); err != nil {
		return s.send([]byte("null"), reply{err: &RPCError{Code: codeParse, Message: "parse error"}})
	}
	if e.Method == "" || e.ID == nil {
		return nil // a response to the server, or a notification
	}
	s.noteID(e.ID)
	if e.Method == "tools/call" && s.sc.CrashOnCall != "" {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(e.Params, &p)
		if s.sc.CrashOnCall == "*" || s.sc.CrashOnCall == p.Name {
			return ErrCrash
		}
	}
	r := s.dispatch(e.Method, e.Params)
	if r.noAnswer {
		return nil
	}
	id := bytes.Clone(e.ID)
	if d := s.sc.DelayMs[e.Method]; d > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			time.Sleep(time.Duration(d) * time.Millisecond)
			_ = s.send(id, r)
		}()
		return nil
	}
	return s.send(id, r)
}

// dispatch computes the reply to one request. It runs on the read loop, so
// the server's counters change in the order requests arrive.
func (s *Server) dispatch(method string, params json.RawMessage) reply {
	if slices.Contains(s.sc.Ignore, method) {
		return reply{noAnswer: true}
	}
	var p struct {
		Meta     map[string]json.RawMessage `json:"_meta"`
		Cursor   *string                    `json:"cursor"`
		Name     string                     `json:"name"`
		URI      string                     `json:"uri"`
		Version  string                     `json:"protocolVersion"`
		Caps     map[string]json.RawMessage `json:"capabilities"`
		Argument json.RawMessage            `json:"arguments"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return errReply(codeInvalidParams, "invalid params")
	}

	switch method {
	case "initialize":
		return s.initialize(p.Version, p.Caps)
	case "server/discover":
		return s.discover()
	case "ping":
		return reply{result: []byte("{}")}
	}

	// Every other request: modern when its _meta names a version and the
	// server speaks the modern revision (a legacy server ignores _meta).
	s.mu.Lock()
	caps := s.initCaps
	initialized := s.initialized
	s.mu.Unlock()
	modern := false
	if raw, ok := p.Meta[MetaProtocolVersion]; ok && s.sc.speaksModern() {
		var v string
		_ = json.Unmarshal(raw, &v)
		if !slices.Contains(s.sc.versions(), v) || v != ModernVersion {
			return s.unsupported(v, []string{ModernVersion})
		}
		modern = true
		caps = nil
		if raw, ok := p.Meta[MetaClientCapabilities]; ok {
			_ = json.Unmarshal(raw, &caps)
		}
	} else if !initialized && len(s.sc.legacy()) == 0 {
		return errReply(codeInvalidParams, "missing _meta "+MetaProtocolVersion)
	}

	switch method {
	case "tools/list":
		return s.list("tools", p.Cursor, caps, modern)
	case "prompts/list":
		return s.list("prompts", p.Cursor, caps, modern)
	case "resources/list":
		return s.list("resources", p.Cursor, caps, modern)
	case "resources/templates/list":
		return s.list("resourceTemplates", p.Cursor, caps, modern)
	case "tools/call":
		return s.call(p.Name, caps)
	case "prompts/get":
		return reply{result: []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}`)}
	case "resources/read":
		return reply{result: fmt.Appendf(nil, `{"contents":[{"uri":%s,"mimeType":"text/plain","text":"hello"}]}`, jsonString(p.URI))}
	case "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return reply{result: []byte("{}")}
	case "completion/complete":
		return reply{result: []byte(`{"completion":{"values":[]}}`)}
	case "subscriptions/listen":
		return reply{noAnswer: true} // a long-lived stream that never reports
	}
	return errReply(codeMethodNotFound, "Method not found")
}

// noteID remembers a request id of the form "PREFIX-N".
func (s *Server) noteID(raw json.RawMessage) {
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return
	}
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 {
		return
	}
	s.mu.Lock()
	s.ownPrefix, s.ownN = id[:i], n
	s.mu.Unlock()
}

// spoofs are the elicitation/create requests a Spoof sends now.
func (s *Server) spoofs() [][]byte {
	sp := s.sc.SpoofElicitations
	s.mu.Lock()
	prefix, n := s.ownPrefix, s.ownN
	s.mu.Unlock()
	if sp == nil || prefix == "" && !sp.OwnIDs {
		return nil
	}
	params, _ := json.Marshal(map[string]any{
		"message": sp.Message,
		"requestedSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{"confirm": map[string]any{"type": "boolean", "default": false}},
			"required":   []string{"confirm"},
		},
	})
	var out [][]byte
	for i := 1; i <= sp.Count; i++ {
		id := jsonString(prefix + "-" + strconv.Itoa(n+i))
		if sp.OwnIDs {
			id = jsonString("spoof-" + strconv.Itoa(i))
		}
		out = append(out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"elicitation/create","params":%s}`, id, params))
	}
	return out
}

func errReply(code int, msg string) reply {
	return reply{err: &RPCError{Code: code, Message: msg}}
}

func (s *Server) unsupported(requested string, supported []string) reply {
	data, _ := json.Marshal(map[string]any{"supported": supported, "requested": requested})
	return reply{err: &RPCError{Code: codeUnsupportedVersion, Message: "Unsupported protocol version", Data: data}}
}

func (s *Server) nextHandshake(caps map[string]json.RawMessage) (Contract, quirks) {
	s.mu.Lock()
	s.handshakes++
	n := s.handshakes
	s.mu.Unlock()
	w := when{session: s.session, listing: n, caps: caps}
	return s.sc.contractAt(w), s.sc.quirksAt(w)
}

func (s *Server) initialize(requested string, caps map[string]json.RawMessage) reply {
	legacy := s.sc.legacy()
	if len(legacy) == 0 {
		return s.unsupported(requested, []string{ModernVersion})
	}
	v := requested
	if !slices.Contains(legacy, v) {
		v = legacy[0]
	}
	s.mu.Lock()
	s.initialized = true
	s.initCaps = caps
	s.mu.Unlock()
	c, q := s.nextHandshake(caps)
	if q.answerVersion != "" {
		v = q.answerVersion
	}
	if s.sc.RawInitializeResult != "" {
		return reply{result: []byte(s.sc.RawInitializeResult), after: s.listChanged()}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"protocolVersion":%s,"capabilities":%s,"serverInfo":%s`, jsonString(v), s.sc.capabilities(), s.sc.serverInfo())
	if c.Instructions != nil {
		fmt.Fprintf(&b, `,"instructions":%s`, jsonString(*c.Instructions))
	}
	b.WriteString("}")
	return reply{result: b.Bytes(), after: s.listChanged()}
}

func (s *Server) discover() reply {
	if !s.sc.speaksModern() {
		return errReply(codeMethodNotFound, "Method not found")
	}
	c, q := s.nextHandshake(nil)
	if q.refuseDiscover {
		return errReply(codeMethodNotFound, "Method not found")
	}
	if s.sc.RawDiscoverResult != "" {
		return reply{result: []byte(s.sc.RawDiscoverResult), after: s.listChanged()}
	}
	versions, _ := json.Marshal(s.sc.versions())
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"supportedVersions":%s,"capabilities":%s`, versions, s.sc.capabilities())
	if c.Instructions != nil {
		fmt.Fprintf(&b, `,"instructions":%s`, jsonString(*c.Instructions))
	}
	fmt.Fprintf(&b, `,"ttlMs":0,"cacheScope":"public","_meta":{%s:%s}}`, jsonString(MetaServerInfo), s.sc.serverInfo())
	return reply{result: b.Bytes(), after: s.listChanged()}
}

func (s *Server) listChanged() [][]byte {
	if !s.sc.ListChangedAfterInit {
		return nil
	}
	return [][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)}
}

func (s *Server) call(name string, caps map[string]json.RawMessage) reply {
	s.mu.Lock()
	listing := max(s.listings["tools"], 1)
	s.mu.Unlock()
	known := false
	for _, t := range s.sc.contractAt(when{session: s.session, listing: listing, caps: caps}).Tools {
		var d struct {
			Name string `json:"name"`
		}
		if json.Unmarshal([]byte(t), &d) == nil && d.Name == name {
			known = true
			break
		}
	}
	if !known {
		return errReply(codeInvalidParams, "Unknown tool")
	}
	if s.sc.OversizedCall > 0 {
		return reply{stream: s.sc.OversizedCall}
	}
	if s.sc.CallResult != "" {
		return reply{result: []byte(s.sc.CallResult)}
	}
	return reply{result: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}
}

// send writes the reply to the request with raw id, then any message
// that follows it.
func (s *Server) send(id []byte, r reply) error {
	var msg []byte
	switch {
	case r.stream > 0:
		if err := s.sendOversized(id, r.stream); err != nil {
			return err
		}
	case r.err != nil:
		msg = errorMessage(id, r.err)
	default:
		msg = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, r.result)
	}
	if msg != nil {
		if err := s.writeMessage(msg); err != nil {
			return err
		}
	}
	for _, a := range r.after {
		if err := s.writeMessage(a); err != nil {
			return err
		}
	}
	return nil
}

func errorMessage(id []byte, e *RPCError) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s`, id, e.Code, jsonString(e.Message))
	if len(e.Data) > 0 {
		fmt.Fprintf(&b, `,"data":%s`, e.Data)
	}
	b.WriteString("}}")
	return b.Bytes()
}

func (s *Server) writeRaw(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.out.Write(b)
	return err
}

// writeMessage writes one message line with the scenario's noise around it.
func (s *Server) writeMessage(msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var b bytes.Buffer
	if s.sc.NoiseBefore != "" {
		b.WriteString(s.sc.NoiseBefore + "\n")
	}
	b.Write(msg)
	b.WriteByte('\n')
	if s.sc.NoiseAfter != "" {
		b.WriteString(s.sc.NoiseAfter + "\n")
	}
	_, err := s.out.Write(b.Bytes())
	return err
}

// sendOversized streams a tools/call result whose frame is at least n
// bytes, in chunks, so the server never holds the frame.
func (s *Server) sendOversized(id []byte, n int) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := bufio.NewWriterSize(s.out, 64<<10)
	if s.sc.NoiseBefore != "" {
		w.WriteString(s.sc.NoiseBefore + "\n")
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			return err
		}
	}
	w.WriteString("\"}]}}\n")
	if s.sc.NoiseAfter != "" {
		w.WriteString(s.sc.NoiseAfter + "\n")
	}
	return w.Flush()
}

// jsonString encodes s as a JSON string without HTML escaping, so
// invisible and markup characters reach the peer as they are.
func jsonString(s string) string {
	return string(Raw(s))
}
