package tlog

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Every parser of a downloaded log accepts only what its encoder writes:
// a parsed value re-encodes to exactly the input.

func FuzzParseEntry(f *testing.F) {
	v := loadVectors(f)
	for _, s := range v.Entries.Valid {
		f.Add([]byte(s))
	}
	for _, c := range v.Entries.Invalid {
		f.Add([]byte(c.Entry))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEntry(b)
		if err != nil {
			return
		}
		again, err := e.Marshal()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted entry does not re-encode: %v", err)
		}
	})
}

func FuzzParseCheckpoint(f *testing.F) {
	v := loadVectors(f)
	for _, c := range v.Checkpoints.Valid {
		f.Add([]byte(c.Body))
	}
	for _, c := range v.Checkpoints.Invalid {
		f.Add([]byte(c.Body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCheckpoint(b)
		if err == nil && !bytes.Equal(c.Format(), b) {
			t.Fatalf("accepted %q re-encodes as %q", b, c.Format())
		}
	})
}

// FuzzOpenCheckpoint feeds signed notes: whatever it accepts carries a
// valid signature by the pinned key over a canonical body.
func FuzzOpenCheckpoint(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	vkey, _ := note.NewEd25519VerifierKey("example.org/log", priv.Public().(ed25519.PublicKey))
	key, _ := note.NewVerifier(vkey)
	wit, _ := NewCosigner("w.example", ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)), func() time.Time { return testEpoch })
	wv, _ := NewWitnessVerifier(wit.VerifierKey())
	signer := seedSigner{priv: priv, hash: key.KeyHash()}
	body := Checkpoint{Origin: "example.org/log", Size: 3, Root: emptyRoot}.Format()
	signed, _ := note.Sign(&note.Note{Text: string(body)}, signer, wit)
	f.Add(signed)
	f.Add(append(signed, "— x AAAAAAAA\n"...))
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := OpenCheckpoint(b, key, []note.Verifier{wv}, 0)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(b, append(sc.Format(), '\n')) {
			t.Fatalf("accepted a note whose body is not the checkpoint")
		}
	})
}

type seedSigner struct {
	priv ed25519.PrivateKey
	hash uint32
}

func (s seedSigner) Name() string                    { return "example.org/log" }
func (s seedSigner) KeyHash() uint32                 { return s.hash }
func (s seedSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.priv, msg), nil }

func FuzzParseTilePath(f *testing.F) {
	v := loadVectors(f)
	for _, c := range v.TilePaths.Valid {
		f.Add(c.Path)
	}
	for _, p := range v.TilePaths.Invalid {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tl, err := ParseTilePath(p)
		if err == nil && TilePath(tl) != p {
			t.Fatalf("accepted %q re-encodes as %q", p, TilePath(tl))
		}
	})
}

func FuzzParseBundle(f *testing.F) {
	f.Add(appendBundleEntry(appendBundleEntry(nil, []byte("a")), []byte("bc")), 2)
	f.Add([]byte{0, 1, 'x'}, 1)
	f.Fuzz(func(t *testing.T, b []byte, w int) {
		es, err := ParseBundle(b, w)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range es {
			again = appendBundleEntry(again, e)
		}
		if !bytes.Equal(again, b) || len(es) != w {
			t.Fatalf("accepted bundle does not re-encode")
		}
	})
}
