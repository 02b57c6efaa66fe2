package launch

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type vectors struct {
	Valid []struct {
		Name    string          `json:"name"`
		Profile json.RawMessage `json:"profile"`
		Digest  string          `json:"digest"`
	} `json:"valid"`
	Invalid []struct {
		Name  string `json:"name"`
		Text  string `json:"text"`
		Error string `json:"error"`
	} `json:"invalid"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "launch", "profiles.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Valid) == 0 || len(v.Invalid) == 0 {
		t.Fatal("no vectors loaded")
	}
	return v
}

func TestProfileVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	for _, c := range v.Valid {
		t.Run(c.Name, func(t *testing.T) {
			p, err := ParseProfile(c.Profile)
			if err != nil {
				t.Fatalf("ParseProfile: %v", err)
			}
			d, err := p.Digest()
			if err != nil || d != c.Digest {
				t.Fatalf("digest %s, %v; want %s", d, err, c.Digest)
			}
			indented, err := p.MarshalIndent()
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseProfile(indented)
			if err != nil {
				t.Fatalf("the indented form does not parse: %v", err)
			}
			if d2, _ := q.Digest(); d2 != d {
				t.Errorf("indented form digest %s, want %s", d2, d)
			}
		})
	}
	for _, c := range v.Invalid {
		t.Run(c.Name, func(t *testing.T) {
			_, err := ParseProfile([]byte(c.Text))
			if err == nil {
				t.Fatalf("ParseProfile accepted it")
			}
			if !errors.Is(err, ErrProfile) {
				t.Errorf("error %v does not wrap ErrProfile", err)
			}
			if !strings.Contains(err.Error(), c.Error) {
				t.Errorf("error %q does not mention %q", err, c.Error)
			}
		})
	}
}

// TestProfileErrorsNeverQuoteInput: a profile file may be anything, and
// its text must not reach the terminal through an error.
func TestProfileErrorsNeverQuoteInput(t *testing.T) {
	t.Parallel()
	secret := "s3cr3t-value-NOT-TO-ECHO"
	for _, text := range []string{
		`{"version":1,"` + secret + `":1}`,
		`{"version":"` + secret + `"}`,
		`{"version":1,"name":"` + secret + `"}`,
		`[` + secret + `]`,
		`{"version":1,"name":"x","argv":["` + secret + `"],"network":{"mode":"` + secret + `"}}`,
	} {
		_, err := ParseProfile([]byte(text))
		if err == nil {
			t.Fatalf("accepted %s", text)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes the input: %v", err)
		}
	}
}

func TestProfileSizeLimit(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte(" "), MaxProfileSize+1)
	if _, err := ParseProfile(big); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("ParseProfile of %d bytes: %v", len(big), err)
	}
}

func FuzzParseProfile(f *testing.F) {
	v := loadVectors(f)
	for _, c := range v.Valid {
		f.Add([]byte(c.Profile))
	}
	for _, c := range v.Invalid {
		f.Add([]byte(c.Text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			if !errors.Is(err, ErrProfile) {
				t.Fatalf("error %v does not wrap ErrProfile", err)
			}
			return
		}
		// Accepted means canonical: the re-encoding parses back to the
		// same profile, with the same digest.
		c, err := p.Marshal()
		if err != nil {
			t.Fatalf("an accepted profile does not marshal: %v", err)
		}
		q, err := ParseProfile(c)
		if err != nil {
			t.Fatalf("the canonical form does not parse: %v", err)
		}
		d1, _ := p.Digest()
		d2, _ := q.Digest()
		if d1 != d2 {
			t.Fatalf("digests differ after a round trip: %s, %s", d1, d2)
		}
	})
}
