package gate_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// TestRTListingBytesCountTheFrameNotTheResult (red team): the gate kept
// each page's items (and the kept result) as slices of the page's frame,
// so the whole frame stayed alive until the verdict while MaxListingBytes
// (and MaxHeldBytes for the kept pages) counted only len(result). A server
// that padded each listing frame with an envelope member the gate ignores
// held 82 MiB under a 1 MiB bound.
func TestRTListingBytesCountTheFrameNotTheResult(t *testing.T) {
	const pages = 40 // 80 MiB of frames against a 1 MiB limit
	page := 0
	var r *rawServer
	r = newRawServer(t, gate.Limits{MaxListingBytes: 1 << 20, MaxPages: 1000}, func(m jsonrpc.Message) string {
		switch m.Method {
		case "initialize":
			return legacyInitResult
		case "tools/list":
			if page++; page == pages {
				if h := liveHeap(); h > 32<<20 {
					t.Errorf("after %d pages the gate holds %d MiB under MaxListingBytes = 1 MiB", page-1, h>>20)
				}
			}
			next := ""
			if page < pages {
				next = fmt.Sprintf(`,"nextCursor":"p%d"`, page)
			}
			return fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{"type":"object"}}]%s}`, page, next)
		}
		return ""
	})
	r.envelope = `,"x":"` + strings.Repeat(" ", 2<<20) + `"`
	r.client(initLegacy)
	runtime.KeepAlive(r)
}

// TestRTVerifiedContractPinsTheRawListing (red team): canon.Transform made
// its output with the capacity of its input, so a definition padded with
// whitespace inside its object kept a canonical form of a few dozen bytes
// in an array the size of the raw definition — for the whole session,
// after the round's pages are gone (80 MiB for 40 tools).
func TestRTVerifiedContractPinsTheRawListing(t *testing.T) {
	const pages = 40
	padding := strings.Repeat(" ", 2<<20)
	page, verified := 0, false
	r := newRawServer(t, gate.Limits{MaxHeldBytes: 1 << 10, MaxPages: 1000}, func(m jsonrpc.Message) string {
		switch m.Method {
		case "initialize":
			return legacyInitResult
		case "tools/list":
			page++
			next := ""
			if page < pages {
				next = fmt.Sprintf(`,"nextCursor":"p%d"`, page)
			}
			return fmt.Sprintf(`{"tools":[{"name":"t%d",%s"inputSchema":{"type":"object"}}]%s}`, page, padding, next)
		}
		return ""
	})
	r.toClient = func(f []byte) { verified = verified || !strings.Contains(string(f), `"error"`) }
	r.client(initLegacy)
	if !verified {
		t.Fatal("the session did not verify")
	}
	if h := liveHeap(); h > 32<<20 {
		t.Errorf("the verified contract holds %d MiB for 40 definitions of about 50 bytes", h>>20)
	}
	runtime.KeepAlive(r)
}

// TestRTSequencesKeepServerCursors (red team): the gate follows the
// client's own listings by the nextCursor each page names, keeping up to
// 64 of them. Keyed by the cursor itself, a server that answered each
// client listing with a first page whose nextCursor was 8 MiB, to a
// client that reads only the first page, left 512 MiB in the session.
func TestRTSequencesKeepServerCursors(t *testing.T) {
	const lists = 64
	tools := `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`
	n := 0
	r := newRawServer(t, gate.Limits{MaxHeldBytes: 1 << 10}, func(m jsonrpc.Message) string {
		switch {
		case m.Method == "initialize":
			return legacyInitResult
		case m.Method == "tools/list" && strings.HasPrefix(string(m.ID), `"mcpseal`):
			return `{` + tools + `}` // the gate's own listing: one page
		case m.Method == "tools/list":
			n++
			return fmt.Sprintf(`{%s,"nextCursor":"%d%s"}`, tools, n, strings.Repeat("c", 8<<20))
		}
		return ""
	})
	r.client(initLegacy)
	r.client(initialized)
	before := liveHeap()
	for i := range lists + 1 { // the first is answered from the kept page
		r.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 100+i))
	}
	if n != lists {
		t.Fatalf("the server answered %d client listings, want %d", n, lists)
	}
	if grew := liveHeap() - before; grew > 64<<20 {
		t.Errorf("the session keeps %d MiB of cursors the client never followed", grew>>20)
	}
	runtime.KeepAlive(r)
}

// TestRTHeldFramesCountLenNotCap (red team): MaxHeldBytes counts
// len(frame), and a frame longer than the Reader's buffer was gathered in
// one grown by doubling: a frame of 8 MiB + 1 sat in a 16 MiB array, and
// the held frames pinned twice the bound (112 MiB under 64 MiB).
func TestRTHeldFramesCountLenNotCap(t *testing.T) {
	r := newRawServer(t, gate.Limits{MaxHeldBytes: 64 << 20}, func(jsonrpc.Message) string { return "" })
	r.client(initLegacy) // the handshake is at the server: its messages are held
	head := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
	one := head + strings.Repeat("x", 8<<20+1-len(head)-len(`"}}`)) + `"}}` + "\n"
	rd := jsonrpc.NewReader(strings.NewReader(strings.Repeat(one, 8)), 0)
	before := liveHeap()
	for {
		f, err := rd.Next()
		if err != nil {
			break
		}
		r.s.FromServer(f)
	}
	if grew := liveHeap() - before; grew > 72<<20 {
		t.Errorf("held frames pin %d MiB under MaxHeldBytes = 64 MiB", grew>>20)
	}
	runtime.KeepAlive(r)
	runtime.KeepAlive(rd)
}

// TestRTPendingIDPinsTheFrame (red team): a forwarded request's
// pendingRequest.id is Peek's m.ID, a slice of the client's frame, so
// every request in flight keeps its whole frame alive after it was
// written to the server — no byte bound counts it (MaxPending counts
// requests, up to 4096 of 16 MiB frames). A server that never answers
// makes the session keep every large call the client sent.
func TestRTPendingIDPinsTheFrame(t *testing.T) {
	const calls = 64
	r := newRawServer(t, gate.Limits{}, func(m jsonrpc.Message) string {
		switch m.Method {
		case "initialize":
			return legacyInitResult
		case "tools/list":
			return `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
		}
		return "" // calls are never answered
	})
	r.client(initLegacy)
	r.client(initialized)
	big := strings.Repeat("x", 1<<20)
	before := liveHeap()
	for i := range calls {
		r.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"p","arguments":{"content":"%s"}}}`, 100+i, big))
	}
	if grew := liveHeap() - before; grew > 8<<20 {
		t.Errorf("%d unanswered calls of 1 MiB keep %d MiB (their ids are a few bytes each)", calls, grew>>20)
	}
	runtime.KeepAlive(r)
}
