package sessionid

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

// TestAttackSplicedSealedIDs (held): a sealed id re-labelled with the
// other listed key's id, with base64 padding or standard-alphabet
// characters added, truncated, with the body of another route's id, or
// with a second dot-separated part does not open.
func TestAttackSplicedSealedIDs(t *testing.T) {
	l1, _ := NewKey("k1", rand.Reader)
	l2, _ := NewKey("k2", rand.Reader)
	k, err := ParseKeys([]byte(FileHeader + l2 + l1))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := Claims{Local: strings.Repeat("ab", 16), Route: "docs", Protocol: "2025-11-25", ClientVersion: "2025-11-25",
		Owner: Owner(""), Issued: now.Unix(), Expires: now.Add(MaxAge).Unix()}
	id, err := k.Seal(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Route = "other"
	other, err := k.Seal(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := id[len("ms1.k2."):]
	for name, v := range map[string]string{
		"key id swapped":   "ms1.k1." + body,
		"padding":          id + "==",
		"std alphabet":     strings.NewReplacer("-", "+", "_", "/").Replace(id),
		"truncated":        id[:len(id)-1],
		"other route body": "ms1.k2." + other[len("ms1.k2."):],
		"extra part":       id + ".x",
		"empty body":       "ms1.k2.",
		"no key id":        "ms1." + body,
	} {
		if v == id {
			continue
		}
		if _, err := k.Open(v, "docs", now); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	if _, err := k.Open(id, "docs", now.Add(MaxAge)); err == nil {
		t.Error("opened at its expiry")
	}
}
