package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// rtOdd are changes that make an event invalid, reduced or escaped.
func rtOdd() []func(*Event) { return append(rtOddVerifiable(), rtOddSubjects()...) }

// rtOddSubjects are subjects and client ids the log must reduce: Verify
// then refuses the line (TestRTReducedSubjectVerifies, not the memo).
func rtOddSubjects() []func(*Event) {
	return []func(*Event){
		func(e *Event) { e.Subject = "alice smith" },
		func(e *Event) { e.Subject = "alice_smith~0123456789ab" },
		func(e *Event) { e.Subject = strings.Repeat("s", maxSubjectLen+1) },
		func(e *Event) { e.Client = "c~1" },
	}
}

func rtOddVerifiable() []func(*Event) {
	d := strings.Repeat("ab", 32)
	return []func(*Event){
		func(e *Event) { e.Digest = strings.ToUpper(d) },
		func(e *Event) { e.Digest = d[:63] },
		func(e *Event) { e.Digest = d + "0" },
		func(e *Event) { e.Receipt = d[:56] + "\xb0" + d[57:] },
		func(e *Event) { e.JTI = d[:63] + ":" },
		func(e *Event) { e.Contract = d[:63] + "`" },
		func(e *Event) { e.Server = "0123456789ABCDEF" },
		func(e *Event) { e.Server = d }, // a digest is no server id
		func(e *Event) { e.Server = "0123456789abcde\xe6" },
		func(e *Event) { e.Server = "0123456789abcdef0" },
		func(e *Event) { e.Label = e.Label + "\n" },
		func(e *Event) { e.Label = "a<b>&c" },
		func(e *Event) { e.Label = "a\x7fb" },
		func(e *Event) { e.Label = strings.Repeat("l", maxLabelLen+1) },
		func(e *Event) { e.Label = strings.Repeat("é", maxLabelLen) },
		func(e *Event) { e.Tool = "read graph\u202e" },
		func(e *Event) { e.Tool = strings.Repeat("t", 200) },
		func(e *Event) { e.Tool = "_" },
		func(e *Event) { e.Code = strings.Repeat("c", maxCodeLen+1) },
		func(e *Event) { e.Stage = "a\"b" },
		func(e *Event) { e.Provider = "p\\q" },
		func(e *Event) { e.Issuer = "https://x/\x00" },
		func(e *Event) { e.Op = "exfiltrate" },
		func(e *Event) { e.Outcome = "yes" },
		func(e *Event) { e.Count = -1 },
	}
}

// TestRTSeenSameOddTwice: an odd value sent twice (or three times) in a
// row is judged the second time as the first; TestSeenChangesNothing
// never sends the same odd value twice.
func TestRTSeenSameOddTwice(t *testing.T) {
	for _, base := range encodeSeeds() {
		for _, f := range rtOdd() {
			e := base
			f(&e)
			checkSeen(t, e, e)
			var sn seen
			for range 3 {
				p1, err1 := prepareSeen(e, 2, zeroHash, &sn)
				p2, err2 := prepare(e, 2, zeroHash)
				if (err1 == nil) != (err2 == nil) || p1 != p2 {
					t.Fatalf("%+v: %+v %v; without memory %+v %v", e, p1, err1, p2, err2)
				}
				if err1 == nil {
					l1, _ := encodeTo(nil, &p1, &sn)
					l2, _ := encodeTo(nil, &p2, nil)
					if !bytes.Equal(l1, l2) {
						t.Fatalf("%+v: %s; without memory %s", e, l1, l2)
					}
				}
			}
		}
	}
}

// TestRTWordsExhaustive: plainWord and hexWord against their byte rules
// for every word over the bytes at their rules' edges.
func TestRTWordsExhaustive(t *testing.T) {
	sets := map[string][]byte{
		"plain": {0x00, 0x1f, 0x20, 0x22, 0x5c, 0x7e, 0x7f, 0x80},
		"hex":   {0x2f, 0x30, 0x39, 0x3a, 0x60, 0x61, 0x66, 0x67},
	}
	for name, set := range sets {
		n := len(set)
		total := 1
		for range 8 {
			total *= n
		}
		for k := 0; k < total; k++ {
			var x uint64
			plain, hexOK := true, true
			for j, r := 0, k; j < 8; j, r = j+1, r/n {
				c := set[r%n]
				x |= uint64(c) << (8 * j)
				plain = plain && plainByte(c)
				hexOK = hexOK && hexByte(c)
			}
			switch name {
			case "plain":
				if plainWord(x) != plain {
					t.Fatalf("plainWord(%#016x) = %v", x, !plain)
				}
			case "hex":
				if hexWord(x) != hexOK {
					t.Fatalf("hexWord(%#016x) = %v", x, !hexOK)
				}
			}
		}
	}
}

// rtEvents is a session's events, good and odd, repeating.
func rtEvents(odd []func(*Event)) []Event {
	base := callEvent(1)
	base.Contract = testDigest
	base.Subject = "alice@example.com"
	base.Issuer = "https://issuer.example/"
	base.Client = "cli-1"
	var es []Event
	for i, f := range odd {
		e := base
		e.Time = time.Date(2026, 12, 1, 10, 0, i, 0, time.UTC)
		es = append(es, base, base)
		f(&e)
		es = append(es, e, e, base, e)
	}
	return es
}

// TestRTLogWritesAsWithoutMemory: a Log's files are byte for byte those
// of a Log that forgets what it saw before every append, events refused
// alike, through rotations (whose re-encoding takes no memory).
func TestRTLogWritesAsWithoutMemory(t *testing.T) {
	for _, maxBytes := range []int64{0, 2000} {
		a, homeA := openTest(t, Options{MaxFileBytes: maxBytes, MaxFiles: 100})
		b, homeB := openTest(t, Options{MaxFileBytes: maxBytes, MaxFiles: 100})
		es := rtEvents(rtOdd())
		for i := 0; i < len(es); i++ {
			batch := es[i : i+1]
			if i%5 == 0 && i+3 <= len(es) {
				batch = es[i : i+3]
				i += 2
			}
			errA := a.AppendAll(batch)
			b.seen = seen{}
			errB := b.AppendAll(batch)
			if fmt.Sprint(errA) != fmt.Sprint(errB) || errors.Is(errA, ErrInvalidEvent) != errors.Is(errB, ErrInvalidEvent) {
				t.Fatalf("event %d: %v; without memory %v", i, errA, errB)
			}
		}
		filesA, filesB := rtFiles(t, homeA), rtFiles(t, homeB)
		if len(filesA) != len(filesB) {
			t.Fatalf("%d files; without memory %d", len(filesA), len(filesB))
		}
		for name, da := range filesA {
			if !bytes.Equal(da, filesB[name]) {
				t.Fatalf("%s differs:\n%s\nwithout memory\n%s", name, da, filesB[name])
			}
		}
	}
	// The chain of a log of verifiable events verifies.
	l, home := openTest(t, Options{MaxFileBytes: 2000, MaxFiles: 100})
	for _, e := range rtEvents(rtOddVerifiable()) {
		_ = l.Append(e)
	}
	if r := mustVerify(t, home); !r.OK() {
		t.Fatalf("faults: %v", r.Faults)
	}
}

// TestRTReducedSubjectVerifies (not the memo; since 455dd0d): an event
// whose subject or client id the log reduces is written, and then Verify
// calls its line non-canonical: parseLine re-prepares the line, and
// ReduceSubject of a reduced value (it holds "~") digests it again.
func TestRTReducedSubjectVerifies(t *testing.T) {
	for _, ev := range []Event{
		{Op: OpCall, Outcome: Allowed, Subject: "alice smith"},
		{Op: OpCall, Outcome: Allowed, Client: "c~1"},
		{Op: OpCall, Outcome: Allowed, Subject: "a~b"},
	} {
		l, home := openTest(t, Options{})
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
		if r := mustVerify(t, home); !r.OK() {
			t.Errorf("%+v: written, then Verify: %v", ev, r.Faults)
		}
	}
}

func rtFiles(t *testing.T, home string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(Dir(home))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == lockName {
			continue
		}
		d, err := os.ReadFile(filepath.Join(Dir(home), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = d
	}
	return out
}

// TestRTSeenConcurrentAppends: goroutines appending to one Log, each
// with its own odd values, leave a chain that verifies and refuse the same
// events as alone (run with -race).
func TestRTSeenConcurrentAppends(t *testing.T) {
	l, home := openTest(t, Options{})
	odd := rtOddVerifiable()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 60 {
				e := callEvent(g)
				if n%3 == 1 {
					odd[(g*7+n)%len(odd)](&e)
				}
				_, want := prepare(e, 1, zeroHash)
				if err := l.Append(e); (err == nil) != (want == nil) {
					select {
					case errs <- fmt.Sprintf("goroutine %d: %+v: %v, alone %v", g, e, err, want):
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if r := mustVerify(t, home); !r.OK() {
		t.Fatalf("faults: %v", r.Faults)
	}
}
