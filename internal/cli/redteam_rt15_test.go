package cli

import (
	"testing"

	"github.com/mcpseal/mcpseal/oauth"
)

// With two trusted issuers, "alice" at one and "alice" at the other are
// two people (a sub is unique only per issuer; the gateway keys sessions
// and rate limits by issuer and subject), but the audit records only the
// subject, the client id and the jti digest: their events cannot be told
// apart, and `audit tail --subject alice` shows both.
func TestAuditOfTheSameSubjectAtTwoIssuersIsIndistinguishable(t *testing.T) {
	t.Parallel()
	a := &oauth.Identity{Issuer: "https://idp.example/realms/staff", Subject: "alice", ClientID: "app"}
	b := &oauth.Identity{Issuer: "https://partner.example", Subject: "alice", ClientID: "app"}
	s1, i1, c1, _ := auditIdentity(a)
	s2, i2, c2, _ := auditIdentity(b)
	if s1 == s2 && i1 == i2 && c1 == c2 {
		t.Fatalf("callers of two issuers are both audited as subject %q issuer %q client %q", s1, i1, c1)
	}
}
