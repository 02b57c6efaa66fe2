package httpgw

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResumeWithLastEventID: a legacy client whose POST stream breaks
// after a progress event resumes it with a GET and Last-Event-ID, and gets
// the answer it would have missed.
func TestResumeWithLastEventID(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Takes a while.", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done at last"}}}, nil
	})
	w, hdr, _, _ := sdkURLSession(t, s)
	sid := hdr["Mcp-Session-Id"]

	// The call's stream: read the progress event, then hang up.
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url+"/docs", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}}`))
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	r2, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	lastID := ""
	sc := bufio.NewScanner(r2.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			lastID = id
		}
		if strings.Contains(sc.Text(), "notifications/progress") {
			break
		}
	}
	cancel()
	r2.Body.Close()
	if lastID == "" {
		t.Fatal("the stream's events carry no id")
	}
	time.Sleep(100 * time.Millisecond)
	close(release)

	// Resume.
	gr, _ := http.NewRequest(http.MethodGet, w.url+"/docs", nil)
	gr.Header.Set("Authorization", "Bearer "+testToken)
	gr.Header.Set("Accept", "text/event-stream")
	gr.Header.Set("Mcp-Session-Id", sid)
	gr.Header.Set("Last-Event-ID", lastID)
	r3, err := http.DefaultClient.Do(gr)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Body.Close()
	if r3.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d", r3.StatusCode)
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r3.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":2`) {
				got <- sc.Text()
				return
			}
		}
		got <- ""
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, "done at last") {
			t.Errorf("resumed stream: %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer on the resumed stream")
	}
	// The same id cannot be resumed twice.
	r4, body := w.do(t, req{method: http.MethodGet, path: "/docs", header: map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": lastID, "Accept": "text/event-stream"}})
	if r4.StatusCode != http.StatusNotFound {
		t.Errorf("second resume: %d %s", r4.StatusCode, body)
	}
}
