package telemetry

import (
	"strings"
	"testing"
)

func TestParseTraceparent(t *testing.T) {
	t.Parallel()
	good := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c, ok := parseTraceparent(good)
	if !ok || c.TraceID.String() != "4bf92f3577b34da6a3ce929d0e0e4736" || c.SpanID.String() != "00f067aa0ba902b7" || !c.TraceFlags.IsSampled() || !c.Remote {
		t.Fatalf("good traceparent: %+v %v", c, ok)
	}
	for _, bad := range []string{
		"",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // unknown version
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // forbidden version
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-xx", // trailing data
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
	} {
		if _, ok := parseTraceparent(bad); ok {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseTracestateBounds(t *testing.T) {
	t.Parallel()
	if _, ok := parseTracestate("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"); !ok {
		t.Fatal("a valid tracestate was refused")
	}
	if _, ok := parseTracestate(strings.Repeat("a", maxTracestate+1)); ok {
		t.Fatal("an oversized tracestate was accepted")
	}
	var members []string
	for i := range maxTracestateMembers + 1 {
		members = append(members, "k"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+"=v")
	}
	if _, ok := parseTracestate(strings.Join(members, ",")); ok {
		t.Fatal("a tracestate of 33 members was accepted")
	}
	if _, ok := parseTracestate("bad key=v"); ok {
		t.Fatal("a malformed tracestate was accepted")
	}
}

// FuzzTraceparent: whatever a client sends, the parser accepts only what
// it would write itself, and never panics.
func FuzzTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "congo=t61rcWkgMzE")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "a=b,c=d")
	f.Fuzz(func(t *testing.T, tp, ts string) {
		if c, ok := parseTraceparent(tp); ok {
			again := "00-" + c.TraceID.String() + "-" + c.SpanID.String() + "-" + tp[53:55]
			if again != tp {
				t.Fatalf("accepted a non-canonical traceparent %q", tp)
			}
		}
		if st, ok := parseTracestate(ts); ok && len(st.String()) > maxTracestate {
			t.Fatalf("tracestate over the bound accepted")
		}
	})
}
