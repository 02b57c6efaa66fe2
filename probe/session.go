package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
	// clientCaps are the capabilities the probe declares: the widest set
	// that servers list more for.
	clientCaps = `{"elicitation":{},"roots":{"listChanged":true},"sampling":{}}`
	clientInfo = `{"name":"mcpseal-probe","version":"1"}`
	idPrefix   = "mcpseal-probe-"
)

// frame is one line read from the server, or the error that ended
// reading.
type frame struct {
	b   []byte
	err error
}

type session struct {
	ctx    context.Context
	proc   Process
	cfg    Config
	w      *jsonrpc.Writer
	frames chan frame
	nextID int
	noise  int
	modern bool
}

func newSession(ctx context.Context, p Process, cfg Config) *session {
	s := &session{ctx: ctx, proc: p, cfg: cfg, w: jsonrpc.NewWriter(p.Stdin()), frames: make(chan frame, 16)}
	go func() {
		defer close(s.frames)
		r := jsonrpc.NewReader(p.Stdout(), cfg.MaxFrame)
		for {
			b, err := r.Next()
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				s.frames <- frame{err: &Error{Reason: ReasonFrame, Detail: fmt.Sprintf("the server sent a line longer than %d bytes", cfg.MaxFrame)}}
				return
			}
			if err != nil {
				s.frames <- frame{err: err}
				return
			}
			s.frames <- frame{b: b}
		}
	}()
	return s
}

// drain lets the reader goroutine finish once the server is stopped.
func (s *session) drain() {
	timeout := time.After(stopGrace)
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return
			}
		case <-timeout:
			return
		}
	}
}

func (s *session) run() (*Result, error) {
	res := &Result{Pages: map[contract.Kind]int{}}
	params := `{"protocolVersion":"` + legacyVersion + `","capabilities":` + clientCaps + `,"clientInfo":` + clientInfo + `}`
	result, rpcErr, err := s.call("initialize", []byte(params))
	if err != nil {
		return nil, err
	}
	if rpcErr != nil {
		// A server that speaks only 2026-07-28.
		s.modern = true
		result, rpcErr, err = s.call("server/discover", s.params(""))
		if err != nil {
			return nil, err
		}
		if rpcErr != nil {
			return nil, &Error{Reason: ReasonHandshake, Detail: "the server refused initialize and server/discover"}
		}
		res.ProtocolVersion = modernVersion
	} else {
		res.ProtocolVersion = stringMember(result, "protocolVersion")
		if err := s.w.Write(jsonrpc.NewNotification("notifications/initialized", nil)); err != nil {
			return nil, s.exited(err)
		}
	}
	instructions, err := instructionsOf(result)
	if err != nil {
		return nil, err
	}
	caps := member(result, "capabilities")
	raw := map[contract.Kind][][]byte{}
	var t tally
	for _, k := range contract.Kinds {
		if !offers(caps, k) {
			continue
		}
		items, pages, err := s.list(k, &t)
		if err != nil {
			return nil, err
		}
		raw[k], res.Pages[k] = items, pages
	}
	c, err := contract.Parse(raw, instructions)
	if err != nil {
		return nil, &Error{Reason: ReasonInvalid, Detail: err.Error(), Err: err}
	}
	res.Contract = c
	return res, nil
}

// tally counts what the listings read so far: definitions, and the
// bytes of the pages, all held until the contract is parsed.
type tally struct{ defs, bytes int }

// list reads every page of kind k.
func (s *session) list(k contract.Kind, t *tally) ([][]byte, int, error) {
	var items [][]byte
	seen := map[string]bool{}
	cursor := ""
	for pages := 1; ; pages++ {
		result, rpcErr, err := s.call(k.ListMethod(), s.params(cursor))
		if err != nil {
			return nil, 0, err
		}
		if rpcErr != nil {
			if errorCode(rpcErr) == -32601 && pages == 1 {
				return nil, 0, nil // announced but not implemented: nothing listed
			}
			return nil, 0, &Error{Reason: ReasonListing, Detail: fmt.Sprintf("%s failed (error %d)", k.ListMethod(), errorCode(rpcErr))}
		}
		// Held until the contract is parsed: a copy, so that what is held
		// is what is counted, not the whole frame it was read from.
		result = bytes.Clone(result)
		page, next, err := listPage(result, k)
		if err != nil {
			return nil, 0, &Error{Reason: ReasonListing, Detail: fmt.Sprintf("a malformed %s page", k)}
		}
		items = append(items, page...)
		t.defs += len(page)
		t.bytes += len(result)
		if t.defs > s.cfg.MaxDefinitions {
			return nil, 0, &Error{Reason: ReasonTooMany, Detail: fmt.Sprintf("more than %d definitions", s.cfg.MaxDefinitions)}
		}
		if t.bytes > s.cfg.MaxListingBytes {
			return nil, 0, &Error{Reason: ReasonListingTooLarge, Detail: fmt.Sprintf("more than %d bytes of definitions", s.cfg.MaxListingBytes)}
		}
		if next == "" {
			return items, pages, nil
		}
		if seen[next] {
			return nil, 0, &Error{Reason: ReasonPaging, Detail: fmt.Sprintf("the %s cursor repeated (a paging loop)", k)}
		}
		if pages >= s.cfg.MaxPages {
			return nil, 0, &Error{Reason: ReasonPaging, Detail: fmt.Sprintf("more than %d pages of %s", s.cfg.MaxPages, k)}
		}
		seen[next] = true
		cursor = next
	}
}

// params builds a request's params: the cursor, and for a modern session
// the client's facts in _meta.
func (s *session) params(cursor string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	if cursor != "" {
		b.WriteString(`"cursor":`)
		b.Write(jsonrpc.AppendString(nil, cursor))
		sep = ","
	}
	if s.modern {
		b.WriteString(sep + `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion +
			`","io.modelcontextprotocol/clientCapabilities":` + clientCaps +
			`,"io.modelcontextprotocol/clientInfo":` + clientInfo + `}`)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// call sends one request and waits for its response, answering the
// server's own requests meanwhile. It returns the result, or the error
// object of an error response.
func (s *session) call(method string, params []byte) (result, rpcErr []byte, err error) {
	s.nextID++
	id := strconv.AppendQuote(nil, idPrefix+strconv.Itoa(s.nextID))
	if err := s.w.Write(jsonrpc.NewRequest(id, method, params)); err != nil {
		return nil, nil, s.exited(err)
	}
	for {
		var f frame
		var ok bool
		select {
		case f, ok = <-s.frames:
		case <-s.ctx.Done():
			return nil, nil, &Error{Reason: ReasonTimeout, Detail: fmt.Sprintf("no complete contract within %v (waiting for %s)", s.cfg.Timeout, method)}
		}
		if !ok {
			return nil, nil, s.exited(nil)
		}
		if f.err != nil {
			var pe *Error
			if errors.As(f.err, &pe) {
				return nil, nil, pe
			}
			return nil, nil, s.exited(f.err)
		}
		m, perr := jsonrpc.Peek(f.b)
		if perr != nil {
			if s.noise++; s.noise > maxNoise {
				return nil, nil, &Error{Reason: ReasonNoise, Detail: fmt.Sprintf("more than %d lines on stdout that are not JSON-RPC", maxNoise)}
			}
			continue
		}
		switch m.Kind {
		case jsonrpc.Request:
			if err := s.answer(m); err != nil {
				return nil, nil, s.exited(err)
			}
		case jsonrpc.Response:
			if jsonrpc.IDKey(m.ID) != jsonrpc.IDKey(id) {
				continue
			}
			if m.Error != nil {
				return nil, m.Error, nil
			}
			return m.Result, nil, nil
		}
	}
}

// answer replies to a request the server sent the probe.
func (s *session) answer(m jsonrpc.Message) error {
	var reply []byte
	switch m.Method {
	case "ping":
		reply = jsonrpc.NewResult(m.ID, []byte(`{}`))
	case "roots/list":
		reply = jsonrpc.NewResult(m.ID, []byte(`{"roots":[]}`))
	case "elicitation/create":
		reply = jsonrpc.NewResult(m.ID, []byte(`{"action":"decline"}`))
	case "sampling/createMessage":
		reply = jsonrpc.NewError(m.ID, -32603, "mcpseal is listing this server's contract; it does not sample", nil)
	default:
		reply = jsonrpc.NewError(m.ID, -32601, "method not found", nil)
	}
	return s.w.Write(reply)
}

func (s *session) exited(err error) error {
	return &Error{Reason: ReasonExited, Detail: "the server exited or closed its output before the contract was read", Err: err}
}
