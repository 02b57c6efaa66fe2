package httpgw

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/policy"
)

// filePolicy is internal/cli's identityPolicy (Visible and Call, line for
// line) over a real policy file: what `mcpseal gateway --auth` runs.
type filePolicy struct {
	sp    *policy.ServerPolicy
	rates *policy.SubjectRates
}

func newFilePolicy(t *testing.T, file string) *filePolicy {
	t.Helper()
	p, err := policy.Parse("policy.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return &filePolicy{sp: p.Server(policy.Server{ID: "docs", Label: "docs", IdentityChecked: true}), rates: policy.NewSubjectRates(nil)}
}

func filePolicyWho(id *oauth.Identity) *policy.Who {
	if id == nil {
		return nil
	}
	return &policy.Who{Issuer: id.Issuer, Subject: id.Subject, ClientID: id.ClientID, Scopes: id.Scopes, Groups: id.Groups, Roles: id.Roles}
}

func (p *filePolicy) Visible(route string, id *oauth.Identity, tool string) bool {
	return p.sp.Tool(tool).Subjects.Allows(filePolicyWho(id))
}

func (p *filePolicy) Call(route string, id *oauth.Identity, tool string) string {
	rule := p.sp.Tool(tool).Subjects
	if !p.rates.Allow(route+"\x00"+id.Key()+"\x00"+tool, rule.CallsPerMinute()) {
		return policy.ReasonRateLimited
	}
	if rule.Confirms(filePolicyWho(id)) {
		return NeedsConfirmation
	}
	return ""
}

// TestAttackHiddenToolToldApartByTheDefaultRateLimit: the policy file of
// docs/… subjects example: a default per-caller rate for every tool
// ("defaults" "*": subject_calls_per_minute) and mutate restricted to eng.
// bob (ops) calls mutate and a made-up name four times each. A hidden
// tool is refused by the gate before the front door's rate limit is
// charged; a missing name is visible by the "*" rule, so it is charged and
// its fourth call is refused as rate-limited. The fourth answers differ:
// bob learns that mutate exists (and that nosuch does not) with 8 calls.
func TestAttackHiddenToolToldApartByTheDefaultRateLimit(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	pol := newFilePolicy(t, `{"version": 1,
  "subjects": {"eng": {"groups": ["eng"]}},
  "defaults": {"tools": {"*": {"subject_calls_per_minute": 3}, "mutate": {"subjects": ["eng"]}}}}`)
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), pol))
	bob := w.token(t, "bob-app")
	ask := func(id int, tool string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, tool)
		resp, b, err := w.modern(t, context.Background(), bob, "tools/call", tool, body)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), strings.ReplaceAll(string(b), tool, "NAME"))
	}
	for i := 1; i <= 4; i++ {
		hidden, missing := ask(i, "mutate"), ask(i, "nosuch")
		if hidden != missing {
			t.Fatalf("call %d: the hidden tool's answer\n%s\ndiffers from the missing tool's\n%s", i, hidden, missing)
		}
	}
}

// TestAttackHiddenToolToldApartByTheDefaultRateLimitLegacy: the same in
// bob's own legacy session (the front door charges the rate there too).
func TestAttackHiddenToolToldApartByTheDefaultRateLimitLegacy(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	pol := newFilePolicy(t, `{"version": 1,
  "subjects": {"eng": {"groups": ["eng"]}},
  "defaults": {"tools": {"*": {"subject_calls_per_minute": 3}, "mutate": {"subjects": ["eng"]}}}}`)
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), pol))
	bob := w.token(t, "bob-app")
	resp, b := w.post(t, bob, "", initBody)
	sid := resp.Header.Get(sessionHeader)
	if sid == "" {
		t.Fatalf("initialize: %d %.200s", resp.StatusCode, b)
	}
	w.post(t, bob, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ask := func(id int, tool string) string {
		resp, b := w.post(t, bob, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
		body := streamIDs.ReplaceAllString(strings.ReplaceAll(string(b), tool, "NAME"), "id: s")
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for i := 1; i <= 4; i++ {
		hidden, missing := ask(2*i, "mutate"), ask(2*i+1, "nosuch")
		hidden = strings.Replace(hidden, fmt.Sprintf(`"id":%d`, 2*i), `"id":N`, 1)
		missing = strings.Replace(missing, fmt.Sprintf(`"id":%d`, 2*i+1), `"id":N`, 1)
		if hidden != missing {
			t.Fatalf("call %d: the hidden tool's answer\n%s\ndiffers from the missing tool's\n%s", i, hidden, missing)
		}
	}
}

// TestAttackHiddenToolToldApartByADefaultConfirmation: the same with a
// default confirmation rule for everyone ("*": confirm_subjects). One
// call each: the missing name is refused as needing a confirmation the
// shared session cannot ask (-32012), the hidden tool as not in the
// contract.
func TestAttackHiddenToolToldApartByADefaultConfirmation(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	pol := newFilePolicy(t, `{"version": 1,
  "subjects": {"eng": {"groups": ["eng"]}, "staff": {"scopes": ["mcp:tools"]}},
  "defaults": {"tools": {"*": {"confirm_subjects": ["staff"]}, "mutate": {"subjects": ["eng"]}}}}`)
	w := newTeamWorld(t, routedTo(t, up.urlRoute(""), up.srv.Certificate(), pol))
	bob := w.token(t, "bob-app")
	ask := func(tool string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, tool)
		resp, b, err := w.modern(t, context.Background(), bob, "tools/call", tool, body)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), strings.ReplaceAll(string(b), tool, "NAME"))
	}
	if hidden, missing := ask("mutate"), ask("nosuch"); hidden != missing {
		t.Fatalf("the hidden tool's answer\n%s\ndiffers from the missing tool's\n%s", hidden, missing)
	}
}
