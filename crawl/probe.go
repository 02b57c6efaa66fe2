package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"sync"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// The probe reads what a server shows a model and nothing more: it
// initializes, lists every page of every kind the server declares, and
// stops. It never calls a tool, gets a prompt or reads a resource.

// Probe limits.
const (
	// probeMaxFrame bounds one message from a probed server.
	probeMaxFrame = 16 << 20
	// probeMaxPages bounds the pages of one listing.
	probeMaxPages = 100
	// probeMaxDefinitions bounds a contract; larger ones are refused.
	probeMaxDefinitions = 10000
	// probeMaxBytes bounds everything a server sends during one probe.
	probeMaxBytes = 64 << 20
	// probeMaxNoise bounds the lines that are not JSON-RPC (banners).
	probeMaxNoise = 200
)

// probeProtocol is the version the probe asks for.
const probeProtocol = "2025-06-18"

// A ProbeError says why a server could not be read. Reason is a stable
// code (see docs/crawler.md); server text is never kept.
type ProbeError struct{ Reason string }

func (e *ProbeError) Error() string { return "probe: " + e.Reason }

func probeFail(reason string) error { return &ProbeError{Reason: reason} }

// A ProbeResult is a server's contract.
type ProbeResult struct {
	Protocol string
	Contract *contract.Contract
}

type prober struct {
	proc    Process
	frames  chan []byte
	readErr chan error
	w       *jsonrpc.Writer
	next    int
	bytes   int
	noise   int
}

// Probe reads the contract of the started server p until ctx ends.
func Probe(ctx context.Context, p Process) (*ProbeResult, error) {
	pr := &prober{proc: p, frames: make(chan []byte), readErr: make(chan error, 1), w: jsonrpc.NewWriter(p.Stdin())}
	done := make(chan struct{})
	defer close(done)
	go func() {
		r := jsonrpc.NewReader(p.Stdout(), probeMaxFrame)
		for {
			f, err := r.Next()
			if err != nil {
				pr.readErr <- err
				return
			}
			select {
			case pr.frames <- f:
			case <-done:
				return
			}
		}
	}()
	initParams := `{"protocolVersion":"` + probeProtocol + `","capabilities":{},"clientInfo":{"name":"mcpseal-crawler","version":"1"}}`
	res, err := pr.call(ctx, "initialize", []byte(initParams))
	if err != nil {
		return nil, err
	}
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		Instructions    *string                    `json:"instructions"`
	}
	if json.Unmarshal(res, &init) != nil || init.ProtocolVersion == "" {
		return nil, probeFail("not-mcp")
	}
	if err := pr.w.Write(jsonrpc.NewNotification("notifications/initialized", nil)); err != nil {
		return nil, probeFail("exited")
	}
	raw := map[contract.Kind][][]byte{}
	total := 0
	for _, k := range contract.Kinds {
		capName := string(k)
		if k == contract.ResourceTemplates {
			capName = "resources"
		}
		if _, ok := init.Capabilities[capName]; !ok {
			continue
		}
		defs, err := pr.list(ctx, k, &total)
		if err != nil {
			return nil, err
		}
		raw[k] = defs
	}
	c, err := contract.Parse(raw, init.Instructions)
	if err != nil {
		return nil, probeFail("invalid-definition")
	}
	return &ProbeResult{Protocol: init.ProtocolVersion, Contract: c}, nil
}

// list reads every page of one kind.
func (pr *prober) list(ctx context.Context, k contract.Kind, total *int) ([][]byte, error) {
	var out [][]byte
	seen := map[string]bool{}
	var cursor []byte
	for page := 0; ; page++ {
		if page == probeMaxPages {
			return nil, probeFail("paging")
		}
		params := []byte("{}")
		if cursor != nil {
			params = []byte(`{"cursor":` + string(cursor) + `}`)
		}
		res, err := pr.call(ctx, k.ListMethod(), params)
		if err != nil {
			var pe *ProbeError
			if errors.As(err, &pe) && pe.Reason == "error-response" && k != contract.Tools {
				return nil, nil // a server may declare resources and refuse templates
			}
			if errors.As(err, &pe) && pe.Reason == "error-response" {
				return nil, probeFail("listing-failed")
			}
			return nil, err
		}
		members, err := jsonrpc.Members(res)
		if err != nil {
			return nil, probeFail("listing-failed")
		}
		cursor = nil
		for _, m := range members {
			switch m.Key {
			case k.ResultMember():
				defs, err := jsonrpc.Elements(m.Value)
				if err != nil {
					return nil, probeFail("listing-failed")
				}
				*total += len(defs)
				if *total > probeMaxDefinitions {
					return nil, probeFail("too-many-definitions")
				}
				out = append(out, defs...)
			case "nextCursor":
				if string(m.Value) != "null" {
					if _, err := jsonrpc.DecodeString(m.Value); err != nil {
						return nil, probeFail("paging")
					}
					cursor = m.Value
				}
			}
		}
		if cursor == nil {
			return out, nil
		}
		if seen[string(cursor)] {
			return nil, probeFail("paging")
		}
		seen[string(cursor)] = true
	}
}

// call sends a request and waits for its response, answering the
// server's own requests meanwhile.
func (pr *prober) call(ctx context.Context, method string, params []byte) ([]byte, error) {
	pr.next++
	id := []byte(strconv.Itoa(pr.next))
	if err := pr.w.Write(jsonrpc.NewRequest(id, method, params)); err != nil {
		return nil, probeFail("exited")
	}
	for {
		var frame []byte
		select {
		case <-ctx.Done():
			return nil, probeFail("timeout")
		case err := <-pr.readErr:
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				return nil, probeFail("too-large")
			}
			return nil, probeFail("exited")
		case frame = <-pr.frames:
		}
		pr.bytes += len(frame)
		if pr.bytes > probeMaxBytes {
			return nil, probeFail("too-large")
		}
		msg, err := jsonrpc.Peek(frame)
		if err != nil {
			if pr.noise++; pr.noise > probeMaxNoise {
				return nil, probeFail("not-mcp")
			}
			continue
		}
		switch msg.Kind {
		case jsonrpc.Request:
			if err := pr.answer(msg); err != nil {
				return nil, err
			}
		case jsonrpc.Response:
			if string(msg.ID) != string(id) {
				continue
			}
			if msg.Error != nil {
				return nil, probeFail("error-response")
			}
			return msg.Result, nil
		}
	}
}

// answer replies to a request from the server: ping and roots/list get
// empty answers, anything else "method not found".
func (pr *prober) answer(msg jsonrpc.Message) error {
	var reply []byte
	switch msg.Method {
	case "ping":
		reply = jsonrpc.NewResult(msg.ID, []byte(`{}`))
	case "roots/list":
		reply = jsonrpc.NewResult(msg.ID, []byte(`{"roots":[]}`))
	default:
		reply = jsonrpc.NewError(msg.ID, -32601, "method not found", nil)
	}
	if err := pr.w.Write(reply); err != nil {
		return probeFail("exited")
	}
	return nil
}

// classify turns an early exit into a reason, reading the server's
// stderr tail for the usual words of a missing credential.
func classify(err error, stderrTail []byte) string {
	var pe *ProbeError
	if !errors.As(err, &pe) {
		return "probe-failed"
	}
	if pe.Reason == "exited" || pe.Reason == "error-response" || pe.Reason == "timeout" {
		if credentialWords().Match(stderrTail) {
			return "needs-credentials"
		}
	}
	if pe.Reason == "error-response" {
		return "initialize-failed"
	}
	return pe.Reason
}

// credentialWords are what servers print when they need a key to start.
var credentialWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(api[ _-]?key|access[ _-]?token|auth[ _-]?token|credential|unauthori[sz]ed|environment variable|env var|must be set|is not set|missing [a-z_ ]*(key|token|secret))`)
})
