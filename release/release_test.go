package release

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "release", "sshsig")
}

const (
	d1 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	d2 = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

var canonical = d2 + "  SHA-extra.json\n" + d1 + "  mcpseal_0.3.0_linux_amd64.tar.gz\n"

func TestParseSumsCanonicalOnly(t *testing.T) {
	t.Parallel()
	s, err := ParseSums([]byte(canonical))
	if err != nil || len(s.Entries) != 2 {
		t.Fatalf("ParseSums = %+v, %v", s, err)
	}
	if e, ok := s.Lookup("mcpseal_0.3.0_linux_amd64.tar.gz"); !ok || e.Digest != d1 {
		t.Errorf("Lookup = %+v, %v", e, ok)
	}
	for name, bad := range map[string]string{
		"empty":           "",
		"no final LF":     strings.TrimSuffix(canonical, "\n"),
		"CRLF":            strings.ReplaceAll(canonical, "\n", "\r\n"),
		"unsorted":        d1 + "  b\n" + d2 + "  a\n",
		"repeated name":   d1 + "  a\n" + d2 + "  a\n",
		"binary marker":   d1 + " *a\n",
		"one space":       d1 + " a\n",
		"uppercase hex":   strings.ToUpper(d1) + "  a\n",
		"short digest":    d1[:63] + "  a\n",
		"folder in name":  d1 + "  ../a\n",
		"leading dash":    d1 + "  -a\n",
		"leading dot":     d1 + "  .a\n",
		"blank line":      d1 + "  a\n\n",
		"space in name":   d1 + "  a b\n",
		"trailing space":  d1 + "  a \n",
		"comment":         "# sums\n" + d1 + "  a\n",
		"oversized":       strings.Repeat(d1+"  a\n", MaxSums/60),
		"too many":        manyLines(MaxEntries + 1),
		"nul in name":     d1 + "  a\x00\n",
		"unicode in name": d1 + "  é\n",
	} {
		if _, err := ParseSums([]byte(bad)); !errors.Is(err, ErrNotCanonical) {
			t.Errorf("%s: ParseSums = %v, want ErrNotCanonical", name, err)
		}
	}
}

func manyLines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(d1 + "  a" + strings.Repeat("b", i%100) + string(rune('a'+i/100)) + "\n")
	}
	return b.String()
}

func TestNewSumsRoundTrip(t *testing.T) {
	t.Parallel()
	s, err := NewSums(map[string]string{"mcpseal_0.3.0_linux_amd64.tar.gz": d1, "SHA-extra.json": d2})
	if err != nil || string(s.Marshal()) != canonical {
		t.Fatalf("NewSums = %q, %v", s.Marshal(), err)
	}
	if _, err := NewSums(map[string]string{"a/b": d1}); err == nil {
		t.Error("a name with a folder was accepted")
	}
	if _, err := NewSums(map[string]string{"a": "sha256:" + d1}); err == nil {
		t.Error("a prefixed digest was accepted")
	}
}

func signer(t *testing.T) ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerify(t *testing.T) {
	t.Parallel()
	s, other := signer(t), signer(t)
	sig, err := Sign(s, []byte(canonical))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Verify([]byte(canonical), sig, []ssh.PublicKey{other.PublicKey(), s.PublicKey()}); err != nil {
		t.Errorf("good: %v", err)
	}
	if _, _, err := Verify([]byte(canonical), sig, []ssh.PublicKey{other.PublicKey()}); !errors.Is(err, ErrUntrustedKey) {
		t.Errorf("wrong key: %v", err)
	}
	if _, _, err := Verify([]byte(canonical), sig, nil); err == nil {
		t.Error("no pinned key: accepted")
	}
	tampered := strings.Replace(canonical, d1, d2, 1)
	if _, _, err := Verify([]byte(tampered), sig, []ssh.PublicKey{s.PublicKey()}); !errors.Is(err, ErrBadSignature) {
		t.Errorf("tampered sums: %v", err)
	}
	// A signed file that is not canonical is still refused.
	loose := []byte(d1 + " *a\n")
	lsig, _ := Sign(s, loose)
	if _, _, err := Verify(loose, lsig, []ssh.PublicKey{s.PublicKey()}); !errors.Is(err, ErrNotCanonical) {
		t.Errorf("signed but not canonical: %v", err)
	}
}

func TestDigestBounded(t *testing.T) {
	t.Parallel()
	d, err := Digest(bytes.NewReader([]byte("test")))
	if err != nil || d != "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" {
		t.Errorf("Digest = %s, %v", d, err)
	}
}

func FuzzParseSums(f *testing.F) {
	f.Add([]byte(canonical))
	f.Add([]byte(d1 + " *a\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSums(data)
		if err != nil {
			return
		}
		if !bytes.Equal(s.Marshal(), data) {
			t.Fatalf("accepted %q, re-encodes as %q", data, s.Marshal())
		}
	})
}
