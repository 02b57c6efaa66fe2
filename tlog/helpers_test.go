package tlog

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/mcpseal/mcpseal/contract"
)

// memStorage is a log folder in memory.
type memStorage struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newMem() *memStorage { return &memStorage{files: map[string][]byte{}} }

func (m *memStorage) ReadFile(name string, limit int64) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return append([]byte(nil), b...), nil
}

func (m *memStorage) WriteFile(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[name] = append([]byte(nil), data...)
	return nil
}

func (m *memStorage) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.files {
		if strings.HasPrefix(n, dir+"/") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *memStorage) clone() *memStorage {
	c := newMem()
	for k, v := range m.files {
		c.files[k] = append([]byte(nil), v...)
	}
	return c
}

type testKey struct {
	signer note.Signer
	key    note.Verifier
}

func newKey(t testing.TB, origin string) testKey {
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := ParseSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{s, v}
}

func newLog(t testing.TB, k testKey) (*memStorage, *Writer) {
	st := newMem()
	w := NewWriter(st, k.signer, k.key)
	if _, err := w.Init(); err != nil {
		t.Fatal(err)
	}
	return st, w
}

var testEpoch = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// testContract returns a one-tool contract whose description carries n.
func testContract(t testing.TB, n int) *contract.Contract {
	tool := fmt.Sprintf(`{"name":"get_weather","description":"Weather, version %d.","inputSchema":{"type":"object"}}`, n)
	c, err := contract.Parse(map[contract.Kind][][]byte{contract.Tools: {[]byte(tool)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testEntry returns the canonical entry of server "local:s<n%servers>"
// observing testContract(n).
func testEntry(t testing.TB, st Storage, n int) []byte {
	c := testContract(t, n)
	if st != nil {
		if err := PutContract(st, c); err != nil {
			t.Fatal(err)
		}
	}
	e := NewEntry(fmt.Sprintf("local:s%d", n%7), nil, testEpoch.Add(time.Duration(n)*time.Hour), time.Time{}, "2025-06-18", c)
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendN(t testing.TB, st Storage, w *Writer, from, count int) *SignedCheckpoint {
	var batch [][]byte
	for i := from; i < from+count; i++ {
		batch = append(batch, testEntry(t, st, i))
	}
	sc, err := w.Append(batch)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// referenceRoot is RFC 6962's Merkle tree hash, computed recursively from
// the entries: an implementation independent of x/mod's stored hashes.
func referenceRoot(entries [][]byte) Hash {
	if len(entries) == 0 {
		return sha256.Sum256(nil)
	}
	if len(entries) == 1 {
		return sha256.Sum256(append([]byte{0}, entries[0]...))
	}
	k := 1
	for k*2 < len(entries) {
		k *= 2
	}
	l, r := referenceRoot(entries[:k]), referenceRoot(entries[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}
