package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// deepDefinition is a JSON array nested depth deep: valid JSON alone
// (encoding/json accepts 10,000 levels), too deep once it sits two levels
// down in a record (definitions inside the record object).
func deepDefinition(depth int) (string, json.RawMessage) {
	raw := json.RawMessage(strings.Repeat("[", depth) + strings.Repeat("]", depth))
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), raw
}

// pinnedRecordFile pins a small server and returns its store, identity and
// the bytes of its record file.
func pinnedRecordFile(t *testing.T, name string) (*Store, Identity, []byte) {
	t.Helper()
	s, _ := openStore(t)
	id := IdentityForName(name)
	observe(t, s, id, profileA, contractOf(ptrTo("Hi."), tool(t, "a", "A."), tool(t, "b", "B.")), Guard)
	data, err := os.ReadFile(filepath.Join(s.Dir(), id.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return s, id, data
}

// withDefinition returns a record file's bytes with one more member in its
// definitions object (the record's own, the last member so named: each
// profile's contract has a definitions member too).
func withDefinition(t *testing.T, data []byte, key string, raw json.RawMessage) []byte {
	t.Helper()
	const member = `,"definitions":{`
	i := strings.LastIndex(string(data), member) // the profiles' come first
	if i < 0 {
		t.Fatal("no definitions object in the record")
	}
	head, tail := string(data[:i+len(member)]), string(data[i+len(member):])
	return []byte(head + `"` + key + `":` + string(raw) + `,` + tail)
}

// TestRedTeamDeepDefinitionDecodeMembersIsNotDecodeStrict: decodeMembers
// decodes each definition with the Decoder's scanner started afresh, so a
// definition's nesting is counted from zero rather than from its depth in
// the record. A definition nested 9,999 or 10,000 deep (the whole record:
// 10,001 or 10,002, past encoding/json's limit of 10,000) is refused by
// decodeStrict and accepted by decodeMembers, which is documented (and
// fuzzed, with inputs far too small to find this) to accept exactly what
// decodeStrict accepts. The same holds of readBack against decodeRecord:
// the session's fast path and the commit's read-back accept a record file
// that record refuses ("record file does not parse", from decodeRecord's
// json.Unmarshal of the version, which still sees the whole file's depth).
func TestRedTeamDeepDefinitionDecodeMembersIsNotDecodeStrict(t *testing.T) {
	t.Parallel()
	_, id, data := pinnedRecordFile(t, "deep-members")
	for _, depth := range []int{9998, 9999, 10000, 10001} {
		key, raw := deepDefinition(depth)
		file := withDefinition(t, data, key, raw)
		werr := decodeStrict(file, new(record))
		gerr := decodeMembers(file, new(record))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("a definition nested %d deep: decodeStrict: %v, decodeMembers: %v", depth, werr, gerr)
		}
		_, rerr := decodeRecord(id.ID, file)
		_, berr := readBack(id.ID, bytes.NewReader(file), nil)
		if (rerr == nil) != (berr == nil) {
			t.Errorf("a definition nested %d deep: decodeRecord: %v, readBack: %v", depth, rerr, berr)
		}
	}
}

// TestRedTeamDeepDefinitionStreamedButTamperedWhole: the session's fast
// path (streamRecord, through readBack) and record (decodeRecord, whose
// json.Unmarshal of the version checks the whole file's nesting) disagree
// on the same record file, whose hash is the one the chain names. The
// fast path hands Observe a record that every other reader (mcpseal
// verify, review, approve) reports as a tampered store.
func TestRedTeamDeepDefinitionStreamedButTamperedWhole(t *testing.T) {
	t.Parallel()
	s, id, _ := pinnedRecordFile(t, "deep-stream")
	v, err := s.open(true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	r, err := v.record(id.ID)
	if err != nil || r == nil {
		t.Fatalf("record: %v, %v", r, err)
	}
	key, raw := deepDefinition(9999)
	r.Definitions[key] = raw
	// A commit reads its record back before its event names it: what it
	// accepts must read back as the record whichever way it is read.
	commitErr := v.commit(opReview, id.ID, r, time.Now())
	streamed := v.streamRecord(id.ID, nil)
	_, recErr := v.record(id.ID)
	if commitErr == nil && recErr != nil {
		t.Errorf("a commit wrote a record that reads back as %v", recErr)
	}
	if streamed != nil && recErr != nil {
		t.Errorf("the fast path streams a record file that record reports as %v", recErr)
	}
}

// TestRedTeamTamperedRecordFileOnTheFastPath: every way of changing a
// pinned record file behind the store (edited in place, appended to,
// truncated, its final newline dropped, swapped with another server's,
// an earlier version of itself restored, re-encoded with the same meaning)
// still reads as a tampered store when a session reads it knowing the
// listed texts (recordKnowing), as record reports it.
func TestRedTeamTamperedRecordFileOnTheFastPath(t *testing.T) {
	t.Parallel()
	first := contractOf(ptrTo("Hi."), tool(t, "a", "A."), tool(t, "b", "B."))
	second := contractOf(ptrTo("Hi."), tool(t, "a", "A."), tool(t, "b", "B, changed."))
	cases := map[string]func(t *testing.T, old, cur, other []byte) []byte{
		"edited": func(t *testing.T, _, cur, _ []byte) []byte {
			return []byte(strings.Replace(string(cur), `"label":"`, `"label":"x`, 1))
		},
		"appended":       func(t *testing.T, _, cur, _ []byte) []byte { return append(cur[:len(cur):len(cur)], ' ', '\n') },
		"truncated":      func(t *testing.T, _, cur, _ []byte) []byte { return cur[:len(cur)/2] },
		"no newline":     func(t *testing.T, _, cur, _ []byte) []byte { return cur[:len(cur)-1] },
		"crlf":           func(t *testing.T, _, cur, _ []byte) []byte { return append(cur[:len(cur)-1:len(cur)-1], '\r', '\n') },
		"another server": func(t *testing.T, _, _, other []byte) []byte { return other },
		"older version":  func(t *testing.T, old, _, _ []byte) []byte { return old },
		"empty":          func(t *testing.T, _, _, _ []byte) []byte { return nil },
		"re-encoded": func(t *testing.T, _, cur, _ []byte) []byte {
			var v any
			if err := json.Unmarshal(cur, &v); err != nil {
				t.Fatal(err)
			}
			out, err := json.MarshalIndent(v, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			return append(out, '\n')
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id, otherID := IdentityForName("fast"), IdentityForName("fast-other")
			path := filepath.Join(s.Dir(), id.ID+".json")
			observe(t, s, id, profileA, first, Guard)
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// An approved change makes a second version of the record.
			res := observe(t, s, id, profileA, second, Guard)
			if err := s.Approve(id.ID, res.Pending, time.Now()); err != nil {
				t.Fatal(err)
			}
			cur, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			observe(t, s, otherID, profileA, second, Guard)
			other, err := os.ReadFile(filepath.Join(s.Dir(), otherID.ID+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tamper(t, old, cur, other), 0o600); err != nil {
				t.Fatal(err)
			}
			tx := &texts{defs: map[string]json.RawMessage{}, instr: map[string]string{}}
			if _, err := entryFor(second, tx); err != nil {
				t.Fatal(err)
			}
			v, err := s.open(false)
			if err != nil {
				t.Fatal(err)
			}
			defer v.close()
			if v.streamRecord(id.ID, tx.defs) != nil {
				t.Error("the fast path streamed a tampered record file")
			}
			r, err := v.recordKnowing(id.ID, tx.defs)
			wantTampered(t, err, id.ID)
			if r != nil {
				t.Error("a tampered record file was read as a record")
			}
		})
	}
}

// TestRedTeamDriftOnTheFastPath: a session whose listing shares its texts
// with the pin (the case recordKnowing is for) still sees every drift: a
// definition changed, added, removed or renamed, the same bytes moved to
// another kind, the instructions changed or dropped; and the pinned
// listing itself matches. Each case checks that the record was streamed.
func TestRedTeamDriftOnTheFastPath(t *testing.T) {
	t.Parallel()
	a, b := tool(t, "a", "A."), tool(t, "b", "B.")
	pinned := contractOf(ptrTo("Hi."), a, b)
	cases := []struct {
		name string
		c    *contract.Contract
		want Outcome
	}{
		{"the same", contractOf(ptrTo("Hi."), a, b), Match},
		{"the same, built again", contractOf(ptrTo("Hi."), tool(t, "b", "B."), tool(t, "a", "A.")), Match},
		{"changed", contractOf(ptrTo("Hi."), a, tool(t, "b", "B!")), Drift},
		{"added", contractOf(ptrTo("Hi."), a, b, tool(t, "c", "C.")), Drift},
		{"removed", contractOf(ptrTo("Hi."), a), Drift},
		{"renamed", contractOf(ptrTo("Hi."), a, tool(t, "c", "B.")), Drift},
		{"moved to prompts", contractOf(ptrTo("Hi."), a, def(t, contract.Prompts, string(b.Canonical))), Drift},
		{"instructions changed", contractOf(ptrTo("Hi!"), a, b), Drift},
		{"instructions dropped", contractOf(nil, a, b), Drift},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id := IdentityForName("fast-drift")
			observe(t, s, id, profileA, pinned, Guard)
			tx := &texts{defs: map[string]json.RawMessage{}, instr: map[string]string{}}
			if _, err := entryFor(tc.c, tx); err != nil {
				t.Fatal(err)
			}
			v, err := s.open(false)
			if err != nil {
				t.Fatal(err)
			}
			streamed := v.streamRecord(id.ID, tx.defs) != nil
			v.close()
			if !streamed {
				t.Fatal("the record was not streamed")
			}
			for _, posture := range []Posture{Guard, Strict} {
				res, err := s.Observe(id, obsOf(profileA), tc.c, posture, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != tc.want {
					t.Errorf("%s: outcome %v, want %v", posture, res.Outcome, tc.want)
				}
			}
		})
	}
}

// TestRedTeamPlantedNewFile: a regular <id>.json.new planted by another
// process is trusted for nothing the chain does not name. Beside a sound
// record file it changes nothing (the session streams the record and
// matches); in place of a removed or edited record file, an earlier
// version of the record or another server's record at .new is tampering;
// only the bytes the latest event names roll forward.
func TestRedTeamPlantedNewFile(t *testing.T) {
	t.Parallel()
	first := contractOf(nil, tool(t, "a", "A."))
	second := contractOf(nil, tool(t, "a", "A, changed."))
	cases := []struct {
		name         string
		record, new  func(old, cur, other []byte) []byte // record nil: removed
		wantTampered bool
	}{
		{"garbage beside a sound record", keep, func(_, _, _ []byte) []byte { return []byte("{}\n") }, false},
		{"an earlier version beside a sound record", keep, func(old, _, _ []byte) []byte { return old }, false},
		{"an earlier version for a removed record", nil, func(old, _, _ []byte) []byte { return old }, true},
		{"an earlier version for an edited record", func(_, cur, _ []byte) []byte { return cur[:len(cur)-1] }, func(old, _, _ []byte) []byte { return old }, true},
		{"another server's record for a removed record", nil, func(_, _, other []byte) []byte { return other }, true},
		{"the named record for a removed record", nil, func(_, cur, _ []byte) []byte { return cur }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t)
			id, otherID := IdentityForName("planted"), IdentityForName("planted-other")
			path := filepath.Join(s.Dir(), id.ID+".json")
			observe(t, s, id, profileA, first, Guard)
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res := observe(t, s, id, profileA, second, Guard)
			if err := s.Approve(id.ID, res.Pending, time.Now()); err != nil {
				t.Fatal(err)
			}
			cur, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			observe(t, s, otherID, profileA, second, Guard)
			other, err := os.ReadFile(filepath.Join(s.Dir(), otherID.ID+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.record == nil {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, tc.record(old, cur, other), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.newPath(id.ID), tc.new(old, cur, other), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := s.Observe(id, obsOf(profileA), second, Guard, time.Now())
			if tc.wantTampered {
				wantTampered(t, err, id.ID)
				return
			}
			if err != nil || got.Outcome != Match {
				t.Fatalf("Observe: %v, %v; want a match", got.Outcome, err)
			}
			// And the next commit neither trusts nor keeps the planted file.
			res = observe(t, s, id, profileA, first, Guard)
			if err := s.Approve(id.ID, res.Pending, time.Now()); err != nil {
				t.Fatal(err)
			}
			if got := observe(t, s, id, profileA, first, Strict); got.Outcome != Match {
				t.Errorf("after the next commit: %v, want a match", got.Outcome)
			}
			mustVerify(t, s)
		})
	}
}

func keep(_, cur, _ []byte) []byte { return cur }
