package gate_test

import (
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
)

func TestDiscoverRefusalOpensNoProfile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	modern := newFakeServer(toolWeather)
	modern.modern = true
	if got := newHarness(t, home, pin.Guard, modern).client(modernReq(0, "server/discover", `{}`, "")); len(got) != 1 || strings.Contains(got[0], `"error"`) {
		t.Fatalf("session 1: %q", got)
	}
	for _, tools := range [][]string{{toolWeather, toolExfil}, {toolWeather}} {
		// The server now refuses server/discover; the dual-era client
		// falls back to initialize, declaring nothing new.
		h := newHarness(t, home, pin.Guard, newFakeServer(tools...))
		if got := h.client(modernReq(0, "server/discover", `{}`, "")); len(got) != 1 || !strings.Contains(got[0], "-32601") {
			t.Fatalf("probe: %q", got)
		}
		got := h.client(strings.Replace(initLegacy, "2025-06-18", "2025-11-25", 1))
		if len(got) != 1 {
			t.Fatalf("client got %q", got)
		}
		code, data := errorOf(t, got[0])
		if code != gate.CodeBlocked {
			t.Fatalf("%d tools: code %d, want blocked", len(tools), code)
		}
		if !hasLabel(data, "protocol", "protocol-downgraded") {
			t.Errorf("%d tools: changes %+v lack protocol-downgraded", len(tools), data.Changes)
		}
	}
}

func hasLabel(d gate.ErrorData, kind, label string) bool {
	for _, ch := range d.Changes {
		for _, l := range ch.Labels {
			if ch.Kind == kind && l == label {
				return true
			}
		}
	}
	return false
}

func TestRepeatedInitializeCannotChangeTheVersion(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.legacySession(initLegacy)
	srv.version = "2024-11-05"
	got := h.client(strings.Replace(initLegacy, `"id":1`, `"id":9`, 1))
	if len(got) != 1 {
		t.Fatalf("client got %q", got)
	}
	code, data := errorOf(t, got[0])
	if code != gate.CodeBlocked || !hasLabel(data, "protocol", "protocol-downgraded") {
		t.Fatalf("code %d data %+v", code, data)
	}
}
