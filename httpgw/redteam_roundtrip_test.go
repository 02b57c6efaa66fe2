package httpgw

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testmcp"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redTeamFormsWorld is a url route to an SDK server with one tool, its
// session initialized; it returns the world and the session's headers.
func redTeamFormsWorld(t *testing.T) (*gwWorld, map[string]string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "tick", Description: "Answers.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ticked"}}}, nil
	})
	w, hdr, _, _ := sdkURLSession(t, s)
	return w, hdr
}

// redTeamPost posts body with exactly the Accept header lines given.
func redTeamPost(t *testing.T, w *gwWorld, hdr map[string]string, accept []string, body string) (*http.Response, []byte) {
	t.Helper()
	hr, err := http.NewRequest(http.MethodPost, w.url+"/docs", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		hr.Header.Set(k, v)
	}
	for _, a := range accept {
		hr.Header.Add("Accept", a)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestRedTeamAcceptJSONAtQZeroGetsJSON: a client that accepts an event
// stream and refuses JSON with q=0 (RFC 9110 §12.4.2: "not acceptable")
// must not get its answer as application/json. Before the lone answer
// went back as JSON, such a client got the event stream it asked for;
// now the q=0 is read as acceptance and the answer is in the refused form.
func TestRedTeamAcceptJSONAtQZeroGetsJSON(t *testing.T) {
	t.Parallel()
	w, hdr := redTeamFormsWorld(t)
	for i, accept := range [][]string{
		{"application/json;q=0, text/event-stream"},
		{"text/event-stream, application/json; q=0"},
		{"application/json;q=0.000, text/event-stream"},
		{"text/event-stream", "application/json;q=0"},
		{"text/event-stream, */*;q=0"},
		{"text/event-stream, application/*;q=0"},
	} {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(10+i) + `,"method":"tools/call","params":{"name":"tick","arguments":{}}}`
		resp, b := redTeamPost(t, w, hdr, accept, body)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode == http.StatusOK && !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Accept %q: answered as %q (%d): %s", accept, ct, resp.StatusCode, b)
		}
	}
}

// TestRedTeamAcceptWildcardOrBothGetsJSONByteForByte: the forms a client
// that accepts JSON may get: an answer as JSON is the whole body, its
// Content-Length exact, with no event-stream framing left in it.
func TestRedTeamAcceptWildcardOrBothGetsJSONByteForByte(t *testing.T) {
	t.Parallel()
	w, hdr := redTeamFormsWorld(t)
	for i, accept := range [][]string{
		{"*/*"},
		{"application/*"},
		{"application/json", "text/event-stream"},
		{"text/event-stream;q=0.1, application/json"},
	} {
		resp, b := redTeamPost(t, w, hdr, accept, `{"jsonrpc":"2.0","id":`+strconv.Itoa(20+i)+`,"method":"tools/call","params":{"name":"tick","arguments":{}}}`)
		ct := resp.Header.Get("Content-Type")
		if ct != "application/json" {
			continue // an event stream is allowed too
		}
		if resp.ContentLength != int64(len(b)) || strings.HasPrefix(string(b), "data:") || strings.HasPrefix(string(b), "event:") ||
			!strings.HasPrefix(string(b), "{") || !strings.Contains(string(b), `"id":`+strconv.Itoa(20+i)) || strings.Contains(string(b), "\n") {
			t.Errorf("Accept %q: JSON answer of length %d: %q", accept, resp.ContentLength, b)
		}
	}
}

// TestRedTeamOutboxNeverReadingChildStaysBounded: against a child that
// never reads, the handler's flushes never wait, what waits is counted
// (full), the partly written rest of a frame included, and once full no
// more than about one frame's worth is counted beyond the bound.
func TestRedTeamOutboxNeverReadingChildStaysBounded(t *testing.T) {
	t.Parallel()
	r, wp, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := newOutbox(wp, slog.New(slog.DiscardHandler))
	if o.try == nil {
		t.Fatal("a pipe's write end is not nonblocking here: the direct write is never taken")
	}
	go o.run()
	frame := []byte(`{"jsonrpc":"2.0","method":"m","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)
	done := make(chan int)
	go func() {
		n := 0
		for !o.full() && n < 64 {
			o.hold(frame)
			o.flush()
			n++
		}
		done <- n
	}()
	var n int
	select {
	case n = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a flush waited for a child that never reads")
	}
	if n >= 64 {
		t.Fatalf("64 MiB queued for a child that never reads, and full() still false")
	}
	o.mu.Lock()
	counted, queued, rest := o.bytes, len(o.frames), len(o.rest)
	o.mu.Unlock()
	// what really waits: the frames queued, the rest, and at most the
	// frame the goroutine is writing.
	if actual := queued*len(frame) + rest; counted < actual {
		t.Errorf("%d bytes counted, %d queued or part-written", counted, actual)
	}
	if counted > softInbox+2*(len(frame)+1) {
		t.Errorf("%d bytes counted, bound %d", counted, softInbox)
	}
	o.close()
	r.Close()
}

// TestRedTeamOutboxWriteErrorStopsOutbox: once the child's input is gone
// (EPIPE), the direct write fails the outbox: nothing more is queued or
// counted, the outbox goroutine ends and closes the write end, and no
// flush blocks.
func TestRedTeamOutboxWriteErrorStopsOutbox(t *testing.T) {
	t.Parallel()
	r, wp, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	o := newOutbox(wp, slog.New(slog.DiscardHandler))
	ran := make(chan struct{})
	go func() { o.run(); close(ran) }()
	o.hold(outboxFrame(0, 0))
	o.flush()
	r.Close()
	for i := range 5 {
		o.hold(outboxFrame(0, i+1))
		o.flush()
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the outbox goroutine outlived a write error")
	}
	o.hold(outboxFrame(0, 9))
	o.push(outboxFrame(0, 10))
	o.flush()
	if o.full() || len(o.frames) != 0 || o.bytes != 0 {
		t.Errorf("after the write error: %d frames, %d bytes still counted", len(o.frames), o.bytes)
	}
	if _, err := wp.Write([]byte("x")); err == nil {
		t.Error("the child's input was not closed after the write error")
	}
}

// TestRedTeamOutboxHoldFlushRacesCloseAndPush: handlers holding and
// flushing, timers pushing and the session closing the outbox at once
// (run with -race): every frame queued before close reaches the child
// whole and in queue order, none twice.
func TestRedTeamOutboxHoldFlushRacesCloseAndPush(t *testing.T) {
	t.Parallel()
	for round := range 20 {
		r, wp, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		o := newOutbox(wp, slog.New(slog.DiscardHandler))
		go o.run()
		var mu sync.Mutex // the session's lock: queue order
		var order [][]byte
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					f := outboxFrame(g, i)
					mu.Lock()
					if g == 2 {
						o.push(f)
					} else {
						o.hold(f)
					}
					o.mu.Lock()
					queued := !o.closed && !o.failed
					o.mu.Unlock()
					if queued {
						order = append(order, append(f, '\n'))
					}
					mu.Unlock()
					if g != 2 {
						o.flush()
					}
				}
			}()
		}
		time.Sleep(time.Duration(round) * 100 * time.Microsecond)
		mu.Lock()
		o.close()
		mu.Unlock()
		got, err := io.ReadAll(r)
		wg.Wait()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		var want []byte
		for _, f := range order {
			want = append(want, f...)
		}
		mu.Unlock()
		if string(got) != string(want) {
			t.Fatalf("round %d: the child got %d bytes (%d lines), %d bytes (%d frames) were queued before close", round, len(got), strings.Count(string(got), "\n"), len(want), len(order))
		}
	}
}

// TestRedTeamCommandRouteChildNeverReadsRequestKeepsItsTimeout: a
// command route's child that never reads its stdin, sent frames larger
// than its pipe takes: the request's handler writes what the pipe takes
// and leaves the rest to the outbox goroutine, so the request ends by its
// timeout, and requests that follow in parallel do too.
func TestRedTeamCommandRouteChildNeverReadsRequestKeepsItsTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t, `{"routes":{"cmd":{"command":["/bin/sh","-c","exec sleep 60"]}}}`, func(c *Config) {
		c.Limits.RequestTimeout = 2 * time.Second
	})
	pad := strings.Repeat("x", 1<<20)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"_meta":{"pad":"` + pad + `"}}}`
			hr, err := http.NewRequest(http.MethodPost, w.url+"/cmd", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			hr.Header.Set("Authorization", "Bearer "+testToken)
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Accept", "application/json, text/event-stream")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp, err := http.DefaultClient.Do(hr.WithContext(ctx))
			if err != nil {
				t.Errorf("request %d: %v after %v", i, err, time.Since(start))
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("request %d: %d %.200s after %v", i, resp.StatusCode, b, time.Since(start))
		}()
	}
	wg.Wait()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("requests to a child that never reads took %v; the timeout is 2s", d)
	}
}

// TestRedTeamOutboxBlockingDescriptorNeverBlocksFlush: a child's input
// that is a blocking descriptor (Fd() puts a pipe in blocking mode) gets
// no direct write; a flush against a child that never reads returns.
func TestRedTeamOutboxBlockingDescriptorNeverBlocksFlush(t *testing.T) {
	t.Parallel()
	r, wp, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_ = wp.Fd() // blocking from now on
	o := newOutbox(wp, slog.New(slog.DiscardHandler))
	if o.try != nil {
		t.Error("a direct write was set up for a blocking descriptor")
	}
	go o.run()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			o.hold(outboxFrame(0, i))
			o.flush()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("flush waited on a blocking descriptor")
	}
	o.close()
	b, _ := io.ReadAll(r)
	if n := strings.Count(string(b), "\n"); n != 20 {
		t.Errorf("%d frames reached the child, want 20", n)
	}
}

// TestRedTeamTimeoutToEventStreamOnlyClientGetsJSON: a client that
// accepts only text/event-stream, whose request times out before any
// event, is answered with application/json, a form it did not accept
// (giveUp's "not started" branch; it predates the lone-answer change,
// which otherwise keeps such a client on an event stream).
func TestRedTeamTimeoutToEventStreamOnlyClientGetsJSON(t *testing.T) {
	t.Parallel()
	w := newWorld(t, `{"routes":{"cmd":{"command":["/bin/sh","-c","exec sleep 60"]}}}`, func(c *Config) {
		c.Limits.RequestTimeout = time.Second
	})
	resp, b := w.do(t, req{path: "/cmd", header: map[string]string{"Accept": "text/event-stream"},
		body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("a client that accepts only an event stream got %q: %s", ct, b)
	}
}

// TestRedTeamProgressBeforeSlowAnswerReachesClientFirst: a stream's
// headers now go out with its first events; a progress event sent long
// before the answer must reach the client before the answer exists (not
// wait in a buffer for the end of the response, nor turn the stream into
// a JSON answer once the answer comes).
func TestRedTeamProgressBeforeSlowAnswerReachesClientFirst(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Reports progress, waits, answers.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	w, hdr, _, _ := sdkURLSession(t, s)

	hr, err := http.NewRequest(http.MethodPost, w.url+"/docs", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		hr.Header.Set(k, v)
	}
	got := make(chan string, 1)
	go func() {
		r, err := http.DefaultClient.Do(hr)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer r.Body.Close()
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			b, _ := io.ReadAll(r.Body)
			got <- "Content-Type " + ct + ": " + string(b)
			return
		}
		buf := make([]byte, 4096)
		var seen string
		for !strings.Contains(seen, "\n\n") {
			n, err := r.Body.Read(buf)
			seen += string(buf[:n])
			if err != nil {
				break
			}
		}
		got <- seen
	}()
	select {
	case first := <-got:
		if !strings.Contains(first, "notifications/progress") || strings.Contains(first, `"done"`) {
			t.Errorf("first event: %q", first)
		}
	case <-time.After(10 * time.Second):
		t.Error("the progress event did not reach the client before the answer")
	}
	close(release)
}

// TestRedTeamCommandRouteSlowChildGetsEveryFrameOnceWhole: a command
// route's child that reads slowly (it answers each call after a delay,
// reading nothing meanwhile), sent calls larger than its pipe by many
// clients at once, each also cancelling one: every frame the gateway
// accepted reaches the child once, whole, and each client's cancel after
// its call.
func TestRedTeamCommandRouteSlowChildGetsEveryFrameOnceWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := dir + "/testserver"
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpseal/mcpseal/internal/testmcp/cmd/testserver").CombinedOutput(); err != nil {
		t.Fatalf("building testserver: %v\n%s", err, out)
	}
	record := dir + "/record.jsonl"
	sc := `{"tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}}],"recordFile":"` + record + `","delayMs":{"tools/call":20}}`
	if err := os.WriteFile(dir+"/sc.json", []byte(sc), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, `{"routes":{"cmd":{"command":["`+bin+`","`+dir+`/sc.json"]}}}`, func(c *Config) {
		c.Limits.RequestTimeout = 60 * time.Second
	})
	resp, body := w.do(t, req{path: "/cmd", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`})
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session id: %d %s", resp.StatusCode, body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	w.do(t, req{path: "/cmd", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: hdr})
	if resp, body := w.do(t, req{path: "/cmd", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, header: hdr}); !strings.Contains(string(body), "echo") {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	const clients, calls = 6, 8
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				id := 1000 + c*100 + i
				pad := strings.Repeat(string(rune('a'+c)), 100_000+i)
				call := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"c":` + strconv.Itoa(c) + `,"pad":"` + pad + `"}}}`
				done := make(chan struct{})
				go func() {
					defer close(done)
					w.do(t, req{path: "/cmd", body: call, header: hdr})
				}()
				if i == calls-1 {
					redTeamWaitInFlight(t, w.gw, strconv.Itoa(id), done)
					w.do(t, req{path: "/cmd", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.Itoa(id) + `,"reason":"c` + strconv.Itoa(c) + `"}}`, header: hdr})
				}
				<-done
			}
		}()
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond)
	recs, err := testmcp.ReadRecords(record)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	callAt := map[int]int{}
	for n, r := range recs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
				Arguments struct {
					C   int    `json:"c"`
					Pad string `json:"pad"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(r.Message), &m); err != nil {
			t.Fatalf("record %d is not a whole frame: %.120q…", n, r.Message)
		}
		seen[r.Message]++
		if m.Method == "tools/call" {
			id, _ := strconv.Atoi(string(m.ID))
			c := (id - 1000) / 100
			if m.Params.Arguments.C != c || strings.Trim(m.Params.Arguments.Pad, string(rune('a'+c))) != "" || len(m.Params.Arguments.Pad) != 100_000+(id-1000)%100 {
				t.Fatalf("call %d reached the child with another's bytes", id)
			}
			callAt[id] = n
		}
		if m.Method == "notifications/cancelled" {
			id, _ := strconv.Atoi(string(m.Params.RequestID))
			if at, ok := callAt[id]; !ok || at > n {
				t.Errorf("the cancel of %d reached the child before its call", id)
			}
		}
	}
	for msg, k := range seen {
		if k > 1 {
			t.Errorf("a frame reached the child %d times: %.100q", k, msg)
		}
	}
	if len(callAt) != clients*calls {
		t.Errorf("%d of %d calls reached the child", len(callAt), clients*calls)
	}
}

// redTeamWaitInFlight waits until a legacy session of gw has the request
// with id in flight: the gateway took it, and queued its frame.
func redTeamWaitInFlight(t *testing.T, gw *Gateway, id string, done <-chan struct{}) {
	key := jsonrpc.IDKey([]byte(id))
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case <-done:
			return // answered before it was seen in flight (a loaded machine)
		default:
		}
		gw.mu.Lock()
		var ss []*session
		for _, s := range gw.sessions {
			if s != nil {
				ss = append(ss, s)
			}
		}
		gw.mu.Unlock()
		for _, s := range ss {
			s.mu.Lock()
			ok := s.waiting[key] != nil
			s.mu.Unlock()
			if ok {
				return
			}
		}
	}
	t.Errorf("request %s never in flight", id)
}

// TestRedTeamAcceptEventStreamAtQZeroGetsEventStream: a client that accepts
// JSON and refuses an event stream with q=0, and asks for progress, must
// get its answer as JSON (its progress is not routed to it, as for a
// client that accepts only JSON), never the stream it refused. (accepts
// ignores q; this predates the lone-answer change, which only made the
// opposite case, TestRedTeamAcceptJSONAtQZeroGetsJSON, newly wrong.)
func TestRedTeamAcceptEventStreamAtQZeroGetsEventStream(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "tick", Description: "Reports progress, then answers.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ticked"}}}, nil
	})
	w, hdr, _, _ := sdkURLSession(t, s)
	for i, accept := range [][]string{
		{"application/json, text/event-stream;q=0"},
		{"application/json", "text/event-stream; q=0"},
		{"application/json, */*;q=0"},
	} {
		resp, b := redTeamPost(t, w, hdr, accept, `{"jsonrpc":"2.0","id":`+strconv.Itoa(30+i)+`,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"p`+strconv.Itoa(i)+`"}}}`)
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Accept %q: answered as %q: %s", accept, ct, b)
		}
	}
}
