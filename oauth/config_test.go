package oauth_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/oauth"
)

// configVectors are auth.json files and what each must do: testdata/oauth/configs.json.
type configVector struct {
	Name  string          `json:"name"`
	File  json.RawMessage `json:"file"`
	Error string          `json:"error"` // "" for a valid file; else a substring of the error
}

func loadConfigVectors(t testing.TB) []configVector {
	b, err := os.ReadFile("../testdata/oauth/configs.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []configVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	return vs
}

func TestConfigVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadConfigVectors(t) {
		_, err := oauth.ParseConfig("auth.json", v.File)
		switch {
		case v.Error == "" && err != nil:
			t.Errorf("%s: %v", v.Name, err)
		case v.Error != "" && err == nil:
			t.Errorf("%s: accepted; want %q", v.Name, v.Error)
		case v.Error != "" && !strings.Contains(err.Error(), v.Error):
			t.Errorf("%s: %v; want %q", v.Name, err, v.Error)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error echoes a value: %v", v.Name, err)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, v := range loadConfigVectors(f) {
		f.Add([]byte(v.File))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := oauth.ParseConfig("auth.json", b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(c.Resource, "https://") || len(c.Issuers) == 0 {
			t.Fatalf("accepted a config without an https resource or an issuer")
		}
		for _, is := range c.Issuers {
			for _, a := range is.Algorithms {
				if a == "none" || strings.HasPrefix(string(a), "HS") {
					t.Fatalf("accepted algorithm %s", a)
				}
			}
		}
	})
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer a.b.c", "bearer x", "Basic x", "Bearer ", "Bearer a==", "Bearer =a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, fail := oauth.BearerToken(map[string][]string{"Authorization": {s}})
		if fail != nil {
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t\r\n\"\\,") || len(tok) > oauth.MaxToken {
			t.Fatalf("accepted token %q", tok)
		}
	})
}
