package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// TestSplitViewFirstListingGetsVerifiedPages: a server that answers the
// gate's own listing honestly and the client's first listing otherwise
// never reaches the client with it: the gate answers that listing with the
// very result it verified, and does not ask the server again.
func TestSplitViewFirstListingGetsVerifiedPages(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	srv.lists["tools/list"] = []string{toolWeather2} // the view for the client
	got := h.listKept()
	m, err := jsonrpc.Peek([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"tools":[` + toolWeather + `]}`; string(m.Result) != want {
		t.Errorf("first listing result %s, want the verified %s", m.Result, want)
	}
	if string(m.ID) != `"kept"` {
		t.Errorf("answered with id %s", m.ID)
	}
	// The next listing is the server's, checked against the pin.
	got2 := h.client(listTools)
	if code, data := errorOf(t, got2[0]); code != gate.CodeBlocked || data.Reason != gate.ReasonDrift {
		t.Fatalf("second listing: code %d reason %s", code, data.Reason)
	}
}

func TestKeptPagesFollowTheCursor(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather, toolEcho)
	srv.pageSize = 1
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	asked := srv.received["tools/list"]
	p1 := h.client(listTools)
	p2 := h.client(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p1"}}`)
	if len(p1) != 1 || !strings.Contains(p1[0], "get_weather") || len(p2) != 1 || !strings.Contains(p2[0], `"echo"`) {
		t.Fatalf("pages %q %q", p1, p2)
	}
	if srv.received["tools/list"] != asked {
		t.Errorf("the server was asked for %d pages the gate had verified", srv.received["tools/list"]-asked)
	}
	// Each kept page answers once.
	h.client(listTools)
	if srv.received["tools/list"] != asked+1 {
		t.Errorf("a third listing was not the server's")
	}
}

func TestKeptPagesDroppedWhenTheListChanges(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	srv.lists["tools/list"] = []string{toolWeather, toolEcho}
	h.serverSays(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	got := h.client(listTools)
	if code, data := errorOf(t, got[0]); code != gate.CodeBlocked || len(data.Changes) != 1 || data.Changes[0].Name != "echo" {
		t.Fatalf("after list_changed the listing was not the server's, checked: code %d %+v", code, data)
	}
}

func TestKeptPagesExpire(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	if d := h.s.Deadline(); d.IsZero() {
		t.Error("no deadline to free the kept pages")
	}
	h.now = h.now.Add(time.Minute)
	h.pump(h.s.Tick())
	asked := srv.received["tools/list"]
	h.client(listTools)
	if srv.received["tools/list"] != asked+1 {
		t.Error("a listing after the kept pages expired was not the server's")
	}
}

// TestKeptPagesOnlyForPlainRequests: a listing that asks for more than a
// page (a progress token, a member a server may read) is the server's.
func TestKeptPagesOnlyForPlainRequests(t *testing.T) {
	t.Parallel()
	for _, params := range []string{
		`{"_meta":{"progressToken":1}}`,
		`{"filter":"x"}`,
	} {
		srv := newFakeServer(toolWeather)
		h := newHarness(t, t.TempDir(), pin.Guard, srv)
		h.legacySession(initLegacy)
		asked := srv.received["tools/list"]
		h.client(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params + `}`)
		if srv.received["tools/list"] != asked+1 {
			t.Errorf("params %s: answered from the kept pages", params)
		}
		// Off the sequence: the kept pages of the kind are dropped.
		h.client(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
		if srv.received["tools/list"] != asked+2 {
			t.Errorf("params %s: a later first page came from the kept pages", params)
		}
	}
}
