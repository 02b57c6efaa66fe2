package policy

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/pin"
)

// TestDocumentedExample loads the full example of docs/policy.md and
// checks that it means what the page says.
func TestDocumentedExample(t *testing.T) {
	t.Parallel()
	p, err := Parse("docs/policy.md", documentedExample(t))
	if err != nil {
		t.Fatalf("the documented example does not load: %v", err)
	}
	mem := p.Server(stdioServer("memory"))
	if tp := mem.Tool("delete_entities"); !tp.Withheld || tp.Reason != ReasonDenied {
		t.Errorf("delete_entities: %+v, want withheld (denied)", tp)
	}
	rg := mem.Tool("read_graph")
	if rg.Withheld || rg.Description == nil || rg.Confirm == nil || *rg.Confirm {
		t.Errorf("read_graph: %+v", rg)
	}
	ce := mem.Tool("create_entities")
	if ce.Limits.ArgumentBytes != 65536 || ce.Limits.CallsPerMinute != 10 || ce.Limits.ResultBytes != 16777216 || ce.Limits.CallTimeout != 5*time.Minute {
		t.Errorf("create_entities limits: %+v", ce.Limits)
	}
	fs := p.Server(stdioServer("filesystem"))
	if tp := fs.Tool("write_file"); !tp.Withheld || tp.Reason != ReasonNotGranted {
		t.Errorf("write_file: %+v, want withheld (not-granted)", tp)
	}
	if tp := fs.Tool("read_file"); tp.Withheld || tp.ConfirmDestructive || tp.Limits.ResultBytes != 4194304 {
		t.Errorf("read_file: %+v", tp)
	}
	if v := NewChecker(p, Options{}).Session(Server{ID: "3f9a0c1d2b4e5f60", Label: "x", Transport: Stdio}).BeforeConnect(context.Background()); v.Refusal == nil || v.Refusal.Reason != ReasonServerBlocked {
		t.Errorf("blocked server: %+v", v)
	}
	rs := p.Server(Server{ID: nameID("remote-search"), Transport: HTTP})
	if !rs.AllowWarn() || len(rs.providerNames()) != 2 || rs.Tool("anything").Limits.CallTimeout != 30*time.Second {
		t.Errorf("remote-search: warn %v providers %v", rs.AllowWarn(), rs.providerNames())
	}
	if got := p.Audit(); got.MaxFiles != 8 || got.MaxFileBytes != 8388608 || !got.Required {
		t.Errorf("audit: %+v", got)
	}
}

// TestNameKeysMatchPinIdentity: a server key written as a name matches
// the server the pin store knows under that name.
func TestNameKeysMatchPinIdentity(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"memory", "", "with space", "ünïcode", "0123456789abcdef0"} {
		if got, want := nameID(name), pin.IdentityForName(name).ID; got != want {
			t.Errorf("nameID(%q) = %s, pin says %s", name, got, want)
		}
	}
}

func TestSettingPrecedence(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"version": 1,
	  "defaults": {"deny": ["d1"], "allow": ["a1", "a2", "d2"], "confirm_destructive": true,
	    "limits": {"argument_bytes": 100, "call_timeout": "1m"},
	    "tools": {"*": {"limits": {"result_bytes": 200}}, "a1": {"confirm": true, "description": "host a1", "limits": {"argument_bytes": 10}}}},
	  "servers": {"s": {"deny": ["d2"], "confirm_destructive": false,
	    "limits": {"argument_bytes": 300},
	    "tools": {"a1": {"limits": {"calls_per_minute": 5}}, "*": {"confirm": false}}}}}`)
	s := p.Server(stdioServer("s"))
	other := p.Server(stdioServer("other"))
	tests := []struct {
		name string
		got  ToolPolicy
		want func(ToolPolicy) bool
	}{
		{"deny accumulates from defaults", s.Tool("d1"), func(tp ToolPolicy) bool { return tp.Withheld && tp.Reason == ReasonDenied }},
		{"deny from the server entry", s.Tool("d2"), func(tp ToolPolicy) bool { return tp.Withheld && tp.Reason == ReasonDenied }},
		{"allow from defaults when the server sets none", s.Tool("zz"), func(tp ToolPolicy) bool { return tp.Withheld && tp.Reason == ReasonNotGranted }},
		{"granted", s.Tool("a2"), func(tp ToolPolicy) bool { return !tp.Withheld }},
		{"server * confirm beats defaults tool confirm", s.Tool("a1"), func(tp ToolPolicy) bool { return tp.Confirm != nil && !*tp.Confirm }},
		{"description from defaults tool entry", s.Tool("a1"), func(tp ToolPolicy) bool { return tp.Description != nil && *tp.Description == "host a1" }},
		{"server limits beat defaults tool limits", s.Tool("a1"), func(tp ToolPolicy) bool { return tp.Limits.ArgumentBytes == 300 }},
		{"server tool limit", s.Tool("a1"), func(tp ToolPolicy) bool { return tp.Limits.CallsPerMinute == 5 }},
		{"defaults * limit", s.Tool("a2"), func(tp ToolPolicy) bool { return tp.Limits.ResultBytes == 200 }},
		{"defaults limit", s.Tool("a2"), func(tp ToolPolicy) bool { return tp.Limits.CallTimeout == time.Minute }},
		{"server confirm_destructive", s.Tool("a2"), func(tp ToolPolicy) bool { return !tp.ConfirmDestructive }},
		{"defaults only: tool limit", other.Tool("a1"), func(tp ToolPolicy) bool { return tp.Limits.ArgumentBytes == 10 && tp.Confirm != nil && *tp.Confirm }},
		{"defaults only: confirm_destructive", other.Tool("a2"), func(tp ToolPolicy) bool { return tp.ConfirmDestructive && tp.Limits.ArgumentBytes == 100 }},
	}
	for _, tt := range tests {
		if !tt.want(tt.got) {
			t.Errorf("%s: got %+v", tt.name, tt.got)
		}
	}
}

func TestDefaultPolicyAllowsEverything(t *testing.T) {
	t.Parallel()
	sp := Default().Server(stdioServer("any"))
	tp := sp.Tool("anything")
	if tp.Withheld || tp.Confirm != nil || tp.ConfirmDestructive || tp.Limits != DefaultLimits {
		t.Errorf("default tool policy: %+v", tp)
	}
	if sp.AllowWarn() || sp.ConfirmTimeout() != DefaultConfirmTimeout || sp.Listed() {
		t.Error("default server policy is not the documented one")
	}
}

// TestToolIsRememberedAsResolved: what Tool remembers is what resolving
// gives, for names asked once and again, from several goroutines, and
// past the bound (where it resolves every time).
func TestToolIsRememberedAsResolved(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"version": 1,
	  "defaults": {"deny": ["d1"], "confirm_destructive": true, "tools": {"*": {"limits": {"result_bytes": 200}}, "a1": {"confirm": true}}},
	  "servers": {"s": {"tools": {"a1": {"limits": {"calls_per_minute": 5}}}}}}`)
	sp := p.Server(stdioServer("s"))
	names := []string{"d1", "a1", "a2", "*"}
	for i := range maxResolvedTools + 10 {
		names = append(names, fmt.Sprintf("t%d", i))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				for _, n := range names {
					if got, want := sp.Tool(n), sp.resolveTool(n); !reflect.DeepEqual(got, want) {
						t.Errorf("Tool(%q) = %+v, resolved %+v", n, got, want)
					}
				}
			}
		})
	}
	wg.Wait()
	sp.mu.Lock()
	n := len(sp.tools)
	sp.mu.Unlock()
	if n != maxResolvedTools {
		t.Errorf("%d tools remembered, want the bound %d", n, maxResolvedTools)
	}
}
