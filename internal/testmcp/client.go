package testmcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// ErrTimeout is returned when no message arrived in time.
var ErrTimeout = errors.New("testmcp: timed out waiting for a message")

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Message is one received line, decoded as far as it goes.
type Message struct {
	Raw     []byte          `json:"-"` // the line without its ending
	Invalid bool            `json:"-"` // Raw is not a JSON object
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// Client is a small JSON-RPC client for gate tests: it writes lines to an
// io.Writer and reads lines from an io.Reader, with a timeout on every
// wait. Requests get integer ids from 1. Messages that arrive while it
// waits for a response (notifications, server requests, other responses)
// are kept in the inbox; server requests for ping and roots/list are
// answered.
type Client struct {
	// Timeout bounds every wait for a message; default 5 s.
	Timeout time.Duration
	// Elicit, when set, answers elicitation/create requests: it gets the
	// request's params and returns the raw result (e.g.
	// {"action":"accept","content":{}}). Unset, they get "method not found".
	Elicit func(params json.RawMessage) string

	w     io.Writer
	lines chan *Message
	errc  chan error
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	nextID  int
	inbox   []*Message
	modern  bool
	version string
	caps    any
}

// NewClient starts reading r in the background.
func NewClient(r io.Reader, w io.Writer) *Client {
	c := &Client{Timeout: 5 * time.Second, w: w, lines: make(chan *Message, 16), errc: make(chan error, 1), done: make(chan struct{})}
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := readLine(br)
			if len(line) > 0 {
				select {
				case c.lines <- parseMessage(line):
				case <-c.done:
					return
				}
			}
			if err != nil {
				c.errc <- err
				return
			}
		}
	}()
	return c
}

func parseMessage(line []byte) *Message {
	m := &Message{}
	if err := json.Unmarshal(line, m); err != nil {
		m = &Message{Invalid: true}
	}
	m.Raw = line
	return m
}

// Close stops the reader and closes the writer when it is an io.Closer.
func (c *Client) Close() error {
	c.once.Do(func() { close(c.done) })
	if wc, ok := c.w.(io.Closer); ok {
		return wc.Close()
	}
	return nil
}

// Send writes one raw line (a newline is added when missing).
func (c *Client) Send(line []byte) error {
	if !bytes.HasSuffix(line, []byte("\n")) {
		line = append(bytes.Clone(line), '\n')
	}
	_, err := c.w.Write(line)
	return err
}

// Recv returns the next message within the client's timeout.
func (c *Client) Recv() (*Message, error) { return c.RecvWithin(c.Timeout) }

// RecvWithin returns the next message within d. At end of input it
// returns io.EOF (or the read error).
func (c *Client) RecvWithin(d time.Duration) (*Message, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case m := <-c.lines:
		return m, nil
	case <-t.C:
		return nil, ErrTimeout
	case err := <-c.errc:
		// Drain anything read before the error.
		select {
		case m := <-c.lines:
			c.errc <- err
			return m, nil
		default:
		}
		c.errc <- err
		return nil, err
	}
}

// Inbox returns and clears the messages set aside while waiting.
func (c *Client) Inbox() []*Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inbox
	c.inbox = nil
	return in
}

// NewID returns the next request id.
func (c *Client) NewID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	return c.nextID
}

// withMeta adds the modern _meta keys to params when the client speaks
// the modern revision.
func (c *Client) withMeta(params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	modern, version, caps := c.modern, c.version, c.caps
	c.mu.Unlock()
	if params == nil {
		raw = []byte("{}")
	}
	if !modern {
		return raw, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("testmcp: params must be an object: %w", err)
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[MetaProtocolVersion] = version
	meta[MetaClientCapabilities] = capsOrEmpty(caps)
	meta[MetaClientInfo] = map[string]string{"name": "testmcp-client", "version": "1.0.0"}
	m["_meta"] = meta
	return json.Marshal(m)
}

func capsOrEmpty(caps any) any {
	if caps == nil {
		return map[string]any{}
	}
	return caps
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	p, err := c.withMeta(params)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": p})
	return c.Send(b)
}

// Request sends a request and waits for its response, which it returns
// whether it is a result or an error. In modern mode params get the
// _meta keys.
func (c *Client) Request(method string, params any) (*Message, error) {
	p, err := c.withMeta(params)
	if err != nil {
		return nil, err
	}
	id := c.NewID()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	if err := c.Send(b); err != nil {
		return nil, err
	}
	return c.Await([]byte(strconv.Itoa(id)))
}

// Await waits for the response with the given raw id, setting other
// messages aside.
func (c *Client) Await(id []byte) (*Message, error) {
	deadline := time.Now().Add(c.Timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, ErrTimeout
		}
		m, err := c.RecvWithin(left)
		if err != nil {
			return nil, err
		}
		if m.IsResponse() && bytes.Equal(bytes.TrimSpace(m.ID), id) {
			return m, nil
		}
		c.answer(m)
		c.mu.Lock()
		c.inbox = append(c.inbox, m)
		c.mu.Unlock()
	}
}

// answer replies to the server requests a test client must answer.
func (c *Client) answer(m *Message) {
	if m.Method == "" || m.ID == nil {
		return
	}
	var result string
	switch m.Method {
	case "ping":
		result = "{}"
	case "roots/list":
		result = `{"roots":[]}`
	case "elicitation/create":
		if c.Elicit == nil {
			_ = c.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
			return
		}
		result = c.Elicit(m.Params)
	default:
		_ = c.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
		return
	}
	_ = c.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result))
}

// Call sends a request and returns its result, or its error as *RPCError.
func (c *Client) Call(method string, params any) (json.RawMessage, error) {
	m, err := c.Request(method, params)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// Initialize runs the legacy handshake (initialize, then
// notifications/initialized) with the given version and capabilities.
func (c *Client) Initialize(version string, caps any) (json.RawMessage, error) {
	res, err := c.Call("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    capsOrEmpty(caps),
		"clientInfo":      map[string]string{"name": "testmcp-client", "version": "1.0.0"},
	})
	if err != nil {
		return nil, err
	}
	return res, c.Notify("notifications/initialized", nil)
}

// Discover switches the client to the modern revision (every later
// request carries the _meta keys) and sends server/discover. On error the
// client stays modern; call Legacy to fall back.
func (c *Client) Discover(version string, caps any) (json.RawMessage, error) {
	c.mu.Lock()
	c.modern, c.version, c.caps = true, version, caps
	c.mu.Unlock()
	return c.Call("server/discover", nil)
}

// Legacy switches the client back to legacy requests (no _meta).
func (c *Client) Legacy() {
	c.mu.Lock()
	c.modern = false
	c.mu.Unlock()
}

// maxPages bounds ListAll. Why 1000: far more than any honest test
// scenario uses, and small enough to stop an endless listing quickly.
const maxPages = 1000

// ErrTooManyPages is returned when a listing does not end within maxPages.
var ErrTooManyPages = errors.New("testmcp: listing did not end")

// ListAll follows a list method's cursors and returns every item of member.
func (c *Client) ListAll(method, member string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	cursor := ""
	for range maxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := c.Call(method, params)
		if err != nil {
			return all, err
		}
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		var items map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return all, err
		}
		if err := json.Unmarshal(res, &items); err != nil {
			return all, err
		}
		var list []json.RawMessage
		if raw, ok := items[member]; ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return all, err
			}
		}
		all = append(all, list...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return all, ErrTooManyPages
}

// ListTools returns every tool of every page of tools/list.
func (c *Client) ListTools() ([]json.RawMessage, error) { return c.ListAll("tools/list", "tools") }

// CallTool calls a tool and returns its result. An input_required answer
// (2026-07-28 multi round-trip) whose input requests are all
// elicitation/create is answered as a client does when Elicit is set: each
// by Elicit, and the call sent again with them and the requestState, at
// most maxRounds times.
func (c *Client) CallTool(name string, args any) (json.RawMessage, error) {
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": args}
	for range maxRounds {
		res, err := c.Call("tools/call", params)
		if err != nil || c.Elicit == nil {
			return res, err
		}
		var ir struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState *string `json:"requestState"`
		}
		if json.Unmarshal(res, &ir) != nil || ir.ResultType != "input_required" || len(ir.InputRequests) == 0 {
			return res, nil
		}
		responses := map[string]json.RawMessage{}
		for k, r := range ir.InputRequests {
			if r.Method != "elicitation/create" {
				return res, nil
			}
			responses[k] = json.RawMessage(c.Elicit(r.Params))
		}
		params = map[string]any{"name": name, "arguments": args, "inputResponses": responses}
		if ir.RequestState != nil {
			params["requestState"] = *ir.RequestState
		}
	}
	return nil, errors.New("testmcp: too many input_required rounds")
}

// maxRounds bounds CallTool's multi round-trip retries (the go-sdk's
// bound).
const maxRounds = 10

// Names returns the "name" member of each definition (for tests).
func Names(defs []json.RawMessage) []string {
	out := make([]string, 0, len(defs))
	for _, d := range defs {
		var n struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(d, &n)
		out = append(out, n.Name)
	}
	return out
}
