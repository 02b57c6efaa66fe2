package policy

import (
	"fmt"
	"testing"
	"time"
)

// A sub is unique only per issuer (OIDC Core §2: "locally unique ...
// within the Issuer"); the gateway itself keys sessions and rate limits
// by issuer and subject. A subject class that names "sub" but no
// "issuers" matches that sub at every issuer auth.json trusts: with a
// staff IdP and a partner (or social) IdP configured, a partner account
// whose sub is "alice" gets staff alice's tools. The policy neither
// refuses such a class nor binds it to one issuer.
func TestSubClassMatchesTheSameSubAtAnotherIssuer(t *testing.T) {
	t.Parallel()
	p, err := Parse("policy.json", []byte(`{"version": 1,
	  "subjects": {"alice": {"sub": ["alice"]}},
	  "servers": {"memory": {"tools": {"delete_entities": {"subjects": ["alice"]}}}}}`))
	if err != nil {
		return // refusing a sub class without issuers is a fix too
	}
	sp := p.Server(Server{ID: nameID("memory"), IdentityChecked: true})
	staff := &Who{Issuer: "https://idp.example/realms/staff", Subject: "alice"}
	partner := &Who{Issuer: "https://partner.example", Subject: "alice"}
	rule := sp.Tool("delete_entities").Subjects
	if rule.Allows(staff) && rule.Allows(partner) {
		t.Fatal(`class {"sub": ["alice"]} matches "alice" of every trusted issuer`)
	}
}

// The front door takes a call from the caller's budget before the gate
// knows whether the tool exists, keyed by the tool name as sent; with a
// subject_calls_per_minute on defaults' "*" every made-up name is a new
// limiter. A caller who used up the budget of an expensive tool sends
// maxSubjectLimiters calls of made-up names within the minute: the map
// is full of recent limiters, evict drops the least recently used one,
// which is the exhausted limiter, and the budget is full again. (Once
// full, each new name also scans all 65536 entries under the one mutex
// every caller's calls take.)
func TestSubjectRateLimitResetByFloodingMadeUpToolNames(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	r := NewSubjectRates(func() time.Time { return now })
	key := func(tool string) string { return "docs\x00iss\x00bob\x00" + tool }
	for range 5 {
		r.Allow(key("expensive"), 5)
	}
	if r.Allow(key("expensive"), 5) {
		t.Fatal("the budget was not used up")
	}
	for i := range maxSubjectLimiters {
		now = now.Add(time.Microsecond)
		r.Allow(key(fmt.Sprintf("made-up-%d", i)), 100)
	}
	if r.Allow(key("expensive"), 5) {
		t.Fatal("bob's used-up budget of expensive is full again after a flood of made-up tool names")
	}
}
