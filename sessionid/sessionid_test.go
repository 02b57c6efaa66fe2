package sessionid

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"
)

func keyFile(t testing.TB, ids ...string) []byte {
	t.Helper()
	b := []byte(FileHeader)
	for _, id := range ids {
		l, err := NewKey(id, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, l...)
	}
	return b
}

func mustKeys(t testing.TB, b []byte) *Keys {
	t.Helper()
	k, err := ParseKeys(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func claims(now time.Time) Claims {
	in := "use the tools wisely"
	return Claims{
		Local: strings.Repeat("ab", 16), Route: "remote", Upstream: "upstream-session-1",
		Protocol: "2025-06-18", ClientVersion: "2025-06-18", Capabilities: []string{"roots", "sampling"},
		Offers: []string{"tools"}, Instructions: &in, Owner: Owner(""),
		Issued: now.Unix(), Expires: now.Add(MaxAge).Unix(),
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	k := mustKeys(t, keyFile(t, "k1"))
	now := time.Unix(1_800_000_000, 0)
	c := claims(now)
	id, err := k.Seal(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "ms1.k1.") || len(id) > MaxID {
		t.Fatalf("id %q", id)
	}
	for _, ch := range []byte(id) {
		if ch < 0x21 || ch > 0x7e {
			t.Fatalf("id has a byte outside visible ASCII: %q", ch)
		}
	}
	got, err := k.Open(id, "remote", now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.Local != c.Local || got.Upstream != c.Upstream || *got.Instructions != *c.Instructions || len(got.Capabilities) != 2 || got.Owner != c.Owner {
		t.Fatalf("claims changed: %+v", got)
	}
	// A fresh nonce per id: the same claims never seal to the same id.
	id2, _ := k.Seal(c, nil)
	if id2 == id {
		t.Fatal("two seals of the same claims are equal")
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	old := keyFile(t, "k1")
	kOld := mustKeys(t, old)
	now := time.Unix(1_800_000_000, 0)
	idOld, err := kOld.Seal(claims(now), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rotated: a new key on top, the old one still listed.
	l, _ := NewKey("k2", rand.Reader)
	rotated := mustKeys(t, append([]byte(FileHeader+l), old[len(FileHeader):]...))
	if rotated.Current() != "k2" {
		t.Fatalf("current %q", rotated.Current())
	}
	if _, err := rotated.Open(idOld, "remote", now); err != nil {
		t.Fatalf("an id sealed under the old key no longer opens: %v", err)
	}
	idNew, _ := rotated.Seal(claims(now), nil)
	if !strings.HasPrefix(idNew, "ms1.k2.") {
		t.Fatalf("new ids are not sealed under the current key: %q", idNew)
	}
	// The old key dropped: its ids stop opening.
	dropped := mustKeys(t, []byte(FileHeader+l))
	if _, err := dropped.Open(idOld, "remote", now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an id under a dropped key opened: %v", err)
	}
}

func TestTamperedIDDoesNotOpen(t *testing.T) {
	t.Parallel()
	k := mustKeys(t, keyFile(t, "k1", "k2"))
	now := time.Unix(1_800_000_000, 0)
	id, _ := k.Seal(claims(now), nil)
	for i := len("ms1.k1."); i < len(id); i++ {
		b := []byte(id)
		b[i] ^= 1
		if _, err := k.Open(string(b), "remote", now); err == nil {
			t.Fatalf("a bit flipped at %d still opens", i)
		}
	}
	// The key id swapped for another listed key.
	swapped := "ms1.k2." + id[len("ms1.k1."):]
	if _, err := k.Open(swapped, "remote", now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a swapped key id opened: %v", err)
	}
	for _, bad := range []string{"ms1.", "ms1.k1", "ms1.k1.", "ms1.nokey." + id[7:], id + "=", id[:len(id)-1], "ms1.k1." + strings.Repeat("A", MaxID)} {
		if _, err := k.Open(bad, "remote", now); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%.40q opened: %v", bad, err)
		}
	}
	if _, err := k.Open(strings.Repeat("ab", 16), "remote", now); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("a replica's own id: %v", err)
	}
}

func TestSealedIDReplayedOnAnotherRoute(t *testing.T) {
	t.Parallel()
	k := mustKeys(t, keyFile(t, "k1"))
	now := time.Unix(1_800_000_000, 0)
	id, _ := k.Seal(claims(now), nil)
	if _, err := k.Open(id, "other", now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an id sealed for one route opened on another: %v", err)
	}
}

func TestExpiredSealedIDDoesNotOpen(t *testing.T) {
	t.Parallel()
	k := mustKeys(t, keyFile(t, "k1"))
	now := time.Unix(1_800_000_000, 0)
	id, _ := k.Seal(claims(now), nil)
	if _, err := k.Open(id, "remote", now.Add(MaxAge)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an expired id opened: %v", err)
	}
	if _, err := k.Open(id, "remote", now.Add(-time.Hour)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an id from the future opened: %v", err)
	}
	if _, err := k.OpenAnyTime(id, "remote"); err != nil {
		t.Fatalf("OpenAnyTime: %v", err)
	}
}

func TestSealRefusesClaimsOutOfBounds(t *testing.T) {
	t.Parallel()
	k := mustKeys(t, keyFile(t, "k1"))
	now := time.Unix(1_800_000_000, 0)
	long := strings.Repeat("x", MaxInstructions+1)
	for name, mut := range map[string]func(*Claims){
		"instructions": func(c *Claims) { c.Instructions = &long },
		"upstream":     func(c *Claims) { c.Upstream = "a b" },
		"local":        func(c *Claims) { c.Local = "x" },
		"lifetime":     func(c *Claims) { c.Expires = c.Issued + int64(MaxAge/time.Second) + 1 },
		"version":      func(c *Claims) { c.Protocol = "latest" },
		"offers":       func(c *Claims) { c.Offers = []string{"tools", "evil"} },
		"owner":        func(c *Claims) { c.Owner = "" },
		"caps":         func(c *Claims) { c.Capabilities = make([]string, MaxCapabilities+1) },
	} {
		c := claims(now)
		mut(&c)
		if _, err := k.Seal(c, nil); err == nil {
			t.Errorf("%s: sealed", name)
		}
	}
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	good := string(keyFile(t, "k1", "k-2"))
	line := strings.Split(good, "\n")[1]
	key := line[3:]
	cases := map[string]string{
		"no header":     good[len(FileHeader):],
		"other version": "mcpseal session keys v2\n" + good[len(FileHeader):],
		"no keys":       FileHeader,
		"no final lf":   strings.TrimSuffix(good, "\n"),
		"blank line":    good + "\n",
		"comment":       good + "# k9 " + key + "\n",
		"crlf":          strings.ReplaceAll(good, "\n", "\r\n"),
		"short key":     FileHeader + "k1 " + key[:40] + "\n",
		"unpadded":      FileHeader + "k1 " + strings.TrimRight(key, "=") + "\n",
		"upper id":      FileHeader + "K1 " + key + "\n",
		"long id":       FileHeader + strings.Repeat("k", 17) + " " + key + "\n",
		"two spaces":    FileHeader + "k1  " + key + "\n",
		"repeated id":   FileHeader + "k1 " + key + "\nk1 " + string(keyFile(t, "x"))[len(FileHeader)+2:],
		"repeated key":  FileHeader + "k1 " + key + "\nk2 " + key + "\n",
		"too large":     good + strings.Repeat("k", MaxKeyFile),
	}
	var many strings.Builder
	many.WriteString(FileHeader)
	for i := 0; i <= MaxKeys; i++ {
		l, _ := NewKey("k"+strings.Repeat("a", i%10)+string(rune('a'+i)), rand.Reader)
		many.WriteString(l)
	}
	cases["too many"] = many.String()
	for name, in := range cases {
		if _, err := ParseKeys([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error quotes the key", name)
		}
	}
	k, err := ParseKeys([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if ids := k.IDs(); len(ids) != 2 || ids[0] != "k1" || k.Current() != "k1" {
		t.Fatalf("ids %v", ids)
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add(keyFile(f, "k1", "k2"))
	f.Add([]byte(FileHeader))
	f.Add([]byte(FileHeader + "k1 AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeys(b)
		if err != nil {
			return
		}
		// Accepted files are exactly the canonical form of what they hold.
		if !bytes.HasPrefix(b, []byte(FileHeader)) || len(k.IDs()) == 0 || len(k.IDs()) > MaxKeys {
			t.Fatalf("accepted %q", b)
		}
	})
}

func FuzzOpen(f *testing.F) {
	k := mustKeys(f, keyFile(f, "k1"))
	now := time.Unix(1_800_000_000, 0)
	id, _ := k.Seal(claims(now), nil)
	f.Add(id, "remote")
	f.Add("ms1.k1.AAAA", "remote")
	f.Add(strings.Repeat("ab", 16), "remote")
	f.Fuzz(func(t *testing.T, id, route string) {
		c, err := k.Open(id, route, now)
		if err != nil {
			return
		}
		// Only what was sealed opens, and only on its route.
		if c.Route != route || c.check() != nil {
			t.Fatalf("opened %+v", c)
		}
	})
}

// BenchmarkOpen is the cost a sealed id adds to each request of a session
// (one AES-256-GCM open and a JSON decode; no key derivation):
//
//	go test -run '^$' -bench Open ./sessionid/
func BenchmarkOpen(b *testing.B) {
	k := mustKeys(b, keyFile(b, "k1"))
	now := time.Unix(1_800_000_000, 0)
	id, err := k.Seal(claims(now), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.OpenAnyTime(id, "remote"); err != nil {
			b.Fatal(err)
		}
	}
}
