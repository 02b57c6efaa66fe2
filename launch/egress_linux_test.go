package launch

import (
	"net"
	"strings"
	"testing"
)

// TestEgressModeOnlyThroughTheProxy: in egress mode the server reaches an
// allowed destination through mcpseal's proxy, and nothing else: not a
// destination off the allowlist, not the allowed one directly.
func TestEgressModeOnlyThroughTheProxy(t *testing.T) {
	t.Parallel()
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	p := hostileProfile(t)
	p.Network = Network{Mode: NetworkEgress, Allow: []string{"127.0.0.1:" + port}}
	s := launch(t, p)
	if text := s.mustCall("egress", map[string]any{"target": echo}); !strings.HasPrefix(text, "ok:") || !strings.HasSuffix(text, "echo ping") {
		t.Errorf("egress to the allowed destination: %s", text)
	}
	wantDenied(t, "egress off the allowlist", s.mustCall("egress", map[string]any{"target": "192.0.2.1:443"}))
	wantDenied(t, "a direct connection to the allowed destination", s.mustCall("connect", map[string]any{"addr": echo}))
	wantDenied(t, "a direct connection to TEST-NET", s.mustCall("connect", map[string]any{"addr": "192.0.2.1:80"}))
	s.close()
	if _, ok := s.events.await(func(e Event) bool { return e.Kind == EventEgressAllowed }); !ok {
		t.Errorf("no egress-allowed event:\n%s", s.events)
	}
	if _, ok := s.events.await(func(e Event) bool { return e.Kind == EventEgressDenied && e.Host == "192.0.2.1" }); !ok {
		t.Errorf("no egress-denied event:\n%s", s.events)
	}
}
