package siem

import (
	"strings"
	"testing"
	"time"
)

// TestAttackCopyDeepNesting: one line of the maximum length, nested as
// deep as it goes, in each form: refused promptly, no crash.
func TestAttackCopyDeepNesting(t *testing.T) {
	n := maxCopyLine/2 - 100
	for _, line := range []string{
		`{"resourceLogs":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
		`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":` + strings.Repeat(`{"a":`, n/5) + `1` + strings.Repeat("}", n/5) + `}]}]}]}`,
		`{"v":1,"type":"mcpseal-audit-batch","events":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
	} {
		start := time.Now()
		_, err := ParseCopy([]byte(line + "\n"))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
		t.Logf("len %d: %v in %v", len(line), err, time.Since(start))
	}
}
