package pkgpin

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

type launchVectors struct {
	Recognize []struct {
		Argv []string `json:"argv"`
		Want *struct {
			Ecosystem Ecosystem `json:"ecosystem"`
			Name      string    `json:"name"`
			Version   string    `json:"version"`
			Tag       string    `json:"tag"`
			Digest    string    `json:"digest"`
		} `json:"want"`
		Error string `json:"error"`
	} `json:"recognize"`
	Rewrite []struct {
		Argv    []string `json:"argv"`
		Package *Package `json:"package"`
		Want    []string `json:"want"`
		Error   string   `json:"error"`
	} `json:"rewrite"`
}

func loadVectors(t testing.TB) launchVectors {
	t.Helper()
	b, err := os.ReadFile("../testdata/pkgpin/launches.json")
	if err != nil {
		t.Fatal(err)
	}
	var v launchVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Recognize) == 0 || len(v.Rewrite) == 0 {
		t.Fatal("loaded no vectors")
	}
	return v
}

// TestLaunchVectors checks every recognition vector of
// testdata/pkgpin/launches.json.
func TestLaunchVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t).Recognize {
		name := strings.Join(v.Argv, " ")
		l, err := Recognize(v.Argv)
		switch {
		case v.Error == "not-lockable":
			if !errors.Is(err, ErrNotLockable) {
				t.Errorf("%q: got %v, %v; want ErrNotLockable", name, l, err)
			}
		case err != nil:
			t.Errorf("%q: %v", name, err)
		case v.Want == nil:
			if l != nil {
				t.Errorf("%q: recognised as %s, want not a registry launch", name, l)
			}
		case l == nil:
			t.Errorf("%q: not recognised", name)
		case l.Ecosystem != v.Want.Ecosystem || l.Name != v.Want.Name || l.Version != v.Want.Version || l.Digest != v.Want.Digest || (l.Ecosystem != OCI && l.Tag != v.Want.Tag):
			t.Errorf("%q: got %+v, want %+v", name, *l, *v.Want)
		}
	}
}

// TestRewriteVectors checks every rewrite vector: the locked version
// runs when the config asks for latest or a tag, and another version or
// package is refused.
func TestRewriteVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t).Rewrite {
		name := strings.Join(v.Argv, " ")
		got, err := Rewrite(v.Argv, v.Package)
		if v.Error == "mismatch" {
			if !errors.Is(err, ErrMismatch) {
				t.Errorf("%q: got %q, %v; want ErrMismatch", name, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, v.Want) {
			t.Errorf("%q: got %q, %v; want %q", name, got, err, v.Want)
		}
	}
}

// TestRewriteDoesNotModifyArgv: the caller's argv is never changed.
func TestRewriteDoesNotModifyArgv(t *testing.T) {
	t.Parallel()
	argv := []string{"npx", "-y", "@acme/x"}
	p := &Package{Ecosystem: NPM, Name: "@acme/x", Version: "1.0.0", Integrity: "sha1-" + strings.Repeat("A", 27) + "="}
	if _, err := Rewrite(argv, p); err != nil {
		t.Fatal(err)
	}
	if argv[2] != "@acme/x" {
		t.Errorf("argv changed: %q", argv)
	}
}
