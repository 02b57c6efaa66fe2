package contract

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestProtocolChangeLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		old, new string
		want     string // "" when no change
	}{
		{"2025-06-18", "2025-06-18", ""},
		{"2025-11-25", "2025-06-18", CodeProtocolDowngraded},
		{"2026-07-28", "2025-11-25", CodeProtocolDowngraded},
		{"2025-06-18", "2025-11-25", CodeProtocolChanged},
		{"2025-06-18", "", CodeProtocolChanged},
		{"", "2025-06-18", CodeProtocolChanged},
		{"2025-06-18", "2025-6-18", CodeProtocolChanged},
		{"2025-02-30", "2025-01-01", CodeProtocolChanged}, // not a date
		{"draft", "2024-11-05", CodeProtocolChanged},
	} {
		ch, ok := CompareProtocol(tc.old, tc.new)
		if !ok {
			if tc.want != "" {
				t.Errorf("%q to %q: no change, want %s", tc.old, tc.new, tc.want)
			}
			continue
		}
		if tc.want == "" || ch.Kind != ProtocolKind || ch.Name != "" || ch.Op != OpChanged || ch.Old != tc.old || ch.New != tc.new ||
			!slices.Equal(ch.Codes(), []string{tc.want}) {
			t.Errorf("%q to %q: %+v, want %s", tc.old, tc.new, ch, tc.want)
		}
	}
	if !IsModernProtocol(ModernProtocol) || !IsModernProtocol("2027-01-01") || IsModernProtocol("2025-11-25") || IsModernProtocol("x") {
		t.Error("IsModernProtocol misjudges a version")
	}
	if ch := FallbackChange(ModernProtocol, "2025-11-25"); !slices.Equal(ch.Codes(), []string{CodeProtocolDowngraded}) || ch.Kind != ProtocolKind {
		t.Errorf("FallbackChange = %+v", ch)
	}
}

// TestProtocolChangeRendersEscaped: the versions come from the server, so
// the terminal sees them escaped.
func TestProtocolChangeRendersEscaped(t *testing.T) {
	t.Parallel()
	ch, _ := CompareProtocol("2026-07-28", "2025-11-25\u202e\n")
	var b bytes.Buffer
	if err := RenderDiff(&b, nil, nil, []Change{ch}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"changed protocol\n", "label: Protocol changed", "pinned:   2026-07-28", "observed: 2025-11-25\\u{202e}"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, '\u202e') {
		t.Error("a bidi control reached the terminal")
	}
}
