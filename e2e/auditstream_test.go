package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The audit stream end to end (issue 16): `mcpseal run` ships its audit
// events to a signed webhook; a spool that fills while the sink is down
// refuses calls (audit.required), and they resume once it catches up;
// `mcpseal audit verify --stream` accepts the receiver's copy and finds a
// batch dropped from it.

type hookSink struct {
	mu     sync.Mutex
	down   bool
	bodies [][]byte
	key    []byte
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	m := hmac.New(sha256.New, h.key)
	m.Write(body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Header.Get("X-Mcpseal-Signature") != "hmac-sha256="+hex.EncodeToString(m.Sum(nil)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if h.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	h.bodies = append(h.bodies, body)
}

// writeHookExport writes an audit-export.json under dir with one webhook
// sink "hook" at url (and its key file); extra is more top-level members,
// each followed by a comma.
func writeHookExport(t *testing.T, dir string, sink *hookSink, url, extra string) string {
	t.Helper()
	keyFile := filepath.Join(dir, "hook.key")
	if err := os.WriteFile(keyFile, sink.key, 0o600); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "audit-export.json")
	if err := os.WriteFile(export, []byte(`{"version":1,`+extra+`"sinks":{"hook":{"type":"webhook","url":"`+url+`/audit","hmac_key_file":"`+keyFile+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return export
}

func (h *hookSink) set(down bool) {
	h.mu.Lock()
	h.down = down
	h.mu.Unlock()
}

// TestAuditSpoolFullRefusesCalls: with the webhook down, the spool
// fills and every call is refused (-32009 audit-spool-full); when the
// webhook returns, the spool drains and calls go through; the receiver's
// copy verifies, and dropping one batch from it is a gap.
func TestAuditSpoolFullRefusesCalls(t *testing.T) {
	t.Parallel()
	h := home(t)
	dir := t.TempDir()
	sink := &hookSink{down: true, key: []byte(strings.Repeat("s", 32))}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	export := writeHookExport(t, dir, sink, srv.URL, `"spool_events":6,`)
	pol := writePolicy(t, `{"version": 1}`)
	p := startScenario(t, h, []string{"--name", "streamed", "--policy", pol, "--audit-export", export}, telemetryScenario(dir))
	if _, err := p.Initialize("2025-06-18", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListTools(); err != nil {
		t.Fatal(err)
	}
	refused := false
	deadline := time.Now().Add(10 * time.Second)
	for !refused && time.Now().Before(deadline) {
		_, err := p.CallTool("echo", map[string]any{"text": "MARKER-ARG"})
		if err != nil {
			code, reason := rpcCode(t, err)
			if code != -32009 || reason != "audit-spool-full" {
				t.Fatalf("refused with %d %q, want -32009 audit-spool-full", code, reason)
			}
			refused = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !refused {
		t.Fatal("calls were still forwarded with a full spool")
	}
	sink.set(false)
	deadline = time.Now().Add(15 * time.Second)
	for {
		if _, err := p.CallTool("echo", map[string]any{"text": "MARKER-ARG"}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("calls stayed refused after the sink caught up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Two more calls, each shipped in a batch of its own: the copy then
	// has a middle batch to drop.
	for range 2 {
		sink.mu.Lock()
		before := len(sink.bodies)
		sink.mu.Unlock()
		if _, err := p.CallTool("echo", map[string]any{"text": "MARKER-ARG"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			sink.mu.Lock()
			n := len(sink.bodies)
			sink.mu.Unlock()
			if n > before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a call's events were not shipped within 10s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if code := p.Close(); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	// What the session left is drained by audit ship.
	if out, errOut, code := mcpseal(t, h, "audit", "ship", "--audit-export", export, "--timeout", "15s"); code != 0 {
		t.Fatalf("audit ship: %d\n%s%s", code, out, errOut)
	}
	sink.mu.Lock()
	bodies := sink.bodies
	sink.mu.Unlock()
	for _, b := range bodies {
		for _, m := range secretMarkers {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("the audit stream carries %q", m)
			}
		}
	}
	copyFile := filepath.Join(dir, "siem-copy.jsonl")
	os.WriteFile(copyFile, append(bytes.Join(bodies, []byte("\n")), '\n'), 0o600)
	out, errOut, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile)
	if code != 0 || !strings.Contains(out, "stream copy ok") {
		t.Fatalf("verify --stream: %d\n%s%s", code, out, errOut)
	}
	if len(bodies) < 3 {
		t.Fatalf("%d batches; the gap check needs a middle one", len(bodies))
	}
	gapped := append(append([][]byte{}, bodies[:1]...), bodies[2:]...)
	os.WriteFile(copyFile, append(bytes.Join(gapped, []byte("\n")), '\n'), 0o600)
	out, _, code = mcpseal(t, h, "audit", "verify", "--stream", copyFile)
	if code != 1 || !strings.Contains(out, "fault: gap") {
		t.Fatalf("a dropped batch: exit %d\n%s", code, out)
	}

	// The first or the last acknowledged batch dropped: within its own
	// bounds the copy verifies; bounded by the sink's cursor it is a gap.
	write := func(bs [][]byte) {
		os.WriteFile(copyFile, append(bytes.Join(bs, []byte("\n")), '\n'), 0o600)
	}
	write(bodies)
	if out, errOut, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile, "--sink", "hook"); code != 0 {
		t.Fatalf("the whole copy with --sink: %d\n%s%s", code, out, errOut)
	}
	for name, bs := range map[string][][]byte{"first": bodies[1:], "last": bodies[:len(bodies)-1]} {
		write(bs)
		if out, errOut, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile); code != 0 {
			t.Fatalf("without its %s batch, within its own bounds: %d\n%s%s", name, code, out, errOut)
		}
		out, _, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile, "--sink", "hook")
		if code != 1 || !strings.Contains(out, "fault: gap") {
			t.Errorf("without its %s batch, with --sink: exit %d\n%s", name, code, out)
		}
	}
	write(bodies[1:])
	if out, _, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile, "--from", "1", "--to", "2"); code != 1 || !strings.Contains(out, "fault: gap") {
		t.Errorf("--from 1 on a copy without its first batch: exit %d\n%s", code, out)
	}
	if _, _, code := mcpseal(t, h, "audit", "verify", "--stream", copyFile, "--sink", "../hook"); code != 2 {
		t.Errorf("--sink ../hook: exit %d, want a usage error", code)
	}
}
