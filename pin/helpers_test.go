package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// def builds a definition of kind k from a JSON object.
func def(t testing.TB, k contract.Kind, raw string) contract.Definition {
	t.Helper()
	d, err := contract.NewDefinition(k, []byte(raw))
	if err != nil {
		t.Fatalf("NewDefinition(%s): %v", raw, err)
	}
	return d
}

// tool builds a tool definition with a description.
func tool(t testing.TB, name, description string) contract.Definition {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"name":        name,
		"description": description,
		"inputSchema": map[string]any{"type": "object"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return def(t, contract.Tools, string(raw))
}

// contractOf builds a contract from definitions; instr may be nil.
func contractOf(instr *string, defs ...contract.Definition) *contract.Contract {
	m := map[contract.Kind][]contract.Definition{}
	for _, d := range defs {
		m[d.Kind] = append(m[d.Kind], d)
	}
	return contract.New(m, instr)
}

func openStore(t testing.TB) (*Store, string) {
	t.Helper()
	home := t.TempDir()
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	return s, home
}

// obsOf is the observation of a client whose profile key is key.
func obsOf(key string) Observation {
	v, caps, ok := ParseProfileKey(key)
	if !ok {
		panic("obsOf: not a plain profile key: " + key)
	}
	return Observation{ClientVersion: v, Capabilities: caps}
}

func observe(t testing.TB, s *Store, id Identity, profile string, c *contract.Contract, posture Posture) Result {
	t.Helper()
	res, err := s.Observe(id, obsOf(profile), c, posture, t0)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return res
}

func wantOutcome(t testing.TB, res Result, want Outcome) {
	t.Helper()
	if res.Outcome != want {
		t.Fatalf("outcome = %v, want %v (changes %+v)", res.Outcome, want, res.Changes)
	}
}

// wantTampered checks that err wraps ErrTampered for server id.
func wantTampered(t testing.TB, err error, id string) {
	t.Helper()
	var te *TamperError
	if !errors.Is(err, ErrTampered) || !errors.As(err, &te) {
		t.Fatalf("err = %v, want a TamperError", err)
	}
	if id != "" && te.ID != id {
		t.Fatalf("TamperError.ID = %q, want %q", te.ID, id)
	}
}

// holdsUnderEveryPosture checks that Observe refuses server id under every
// posture and writes nothing.
func holdsUnderEveryPosture(t testing.TB, s *Store, id Identity, c *contract.Contract) {
	t.Helper()
	before := snapshot(t, s)
	for _, p := range []Posture{Guard, Strict, Monitor} {
		_, err := s.Observe(id, obsOf(profileA), c, p, t0)
		wantTampered(t, err, id.ID)
	}
	if after := snapshot(t, s); !bytes.Equal(before, after) {
		t.Fatalf("a held Observe changed the store")
	}
}

// snapshot returns the store's files (except seen/ and the lock) as one
// byte string.
func snapshot(t testing.TB, s *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	entries, err := os.ReadDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == ".lock" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir(), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString(e.Name() + "\x00")
		buf.Write(data)
		buf.WriteString("\x00")
	}
	return buf.Bytes()
}

func eventLines(t testing.TB, s *Store) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func mustVerify(t testing.TB, s *Store) Report {
	t.Helper()
	rep, err := s.Verify()
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("Verify faults: %+v", rep.Faults)
	}
	return rep
}

func ptrTo(s string) *string { return &s }

const (
	profileA = "2025-06-18|"
	profileB = "2025-06-18|roots"
	profileC = "2025-06-18|roots,sampling"
)

// onlyPending returns the record's one pending change.
func onlyPending(t testing.TB, rec *Record) Pending {
	t.Helper()
	if len(rec.Pending) != 1 {
		t.Fatalf("%d pending profiles, want 1: %+v", len(rec.Pending), rec.Pending)
	}
	return rec.Pending[0]
}

// setOf is the review-set digest of one pending profile whose session named
// no protocol (what obsOf observes).
func setOf(profile, contractDigest string) string {
	return reviewSetDigest([]reviewItem{{Profile: profile, Contract: contractDigest, Protocol: ptrTo("")}})
}
