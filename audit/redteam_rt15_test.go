package audit

import (
	"strings"
	"testing"
)

// Two different callers are written with the same audit subject: "alice
// smith" and "alice_smith", "josé" and "jos_", and any two subjects that
// share their first 128 runes. `audit tail --subject` (which reduces its
// argument the same way) then shows one caller's calls as the other's.
// The events carry no digest of the raw subject (nor the issuer) to tell
// them apart.
func TestAuditSubjectsOfTwoCallersCollide(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{{"alice smith", "alice_smith"}, {"josé", "jos_"}, {strings.Repeat("a", 128) + "1", strings.Repeat("a", 128) + "2"}}
	for _, p := range pairs {
		if ReduceSubject(p[0]) == ReduceSubject(p[1]) {
			t.Errorf("subjects %q and %q are both written as %q", p[0], p[1], ReduceSubject(p[0]))
		}
	}
}
