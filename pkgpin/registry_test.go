package pkgpin

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeRegistry serves npm version documents and PyPI JSON API documents
// from maps a test changes at will.
type fakeRegistry struct {
	mu   sync.Mutex
	npm  map[string]map[string]any // name -> version or tag -> document
	pypi map[string]map[string]any // name -> version ("" for the project document) -> document
	hits []string
}

func newFakeRegistry(t *testing.T) (*fakeRegistry, *httptest.Server) {
	f := &fakeRegistry{npm: map[string]map[string]any{}, pypi: map[string]map[string]any{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits = append(f.hits, r.URL.Path)
	path := r.URL.Path
	var doc any
	if rest, ok := strings.CutPrefix(path, "/pypi/"); ok {
		parts := strings.Split(strings.TrimSuffix(rest, "/json"), "/")
		version := ""
		if len(parts) == 2 {
			version = parts[1]
		}
		doc = f.pypi[parts[0]][version]
	} else {
		i := strings.LastIndexByte(path, '/')
		doc = f.npm[path[1:i]][path[i+1:]]
	}
	if doc == nil {
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(doc)
}

func integrityOf(content string) string {
	sum := sha512.Sum512([]byte(content))
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func (f *fakeRegistry) publishNPM(name, version, content string, tags ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.npm[name] == nil {
		f.npm[name] = map[string]any{}
	}
	doc := map[string]any{"name": name, "version": version, "dist": map[string]any{"integrity": integrityOf(content), "shasum": "00"}}
	f.npm[name][version] = doc
	for _, t := range tags {
		f.npm[name][t] = doc
	}
}

func (f *fakeRegistry) publishPyPI(name, version string, latest bool, files map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pypi[name] == nil {
		f.pypi[name] = map[string]any{}
	}
	var urls []any
	for fn, sha := range files {
		urls = append(urls, map[string]any{"filename": fn, "digests": map[string]any{"sha256": sha}})
	}
	doc := map[string]any{"info": map[string]any{"name": name, "version": version}, "urls": urls}
	f.pypi[name][version] = doc
	if latest {
		f.pypi[name][""] = doc
	}
}

func npmLaunch(t *testing.T, argv ...string) *Launch {
	t.Helper()
	l, err := Recognize(argv)
	if err != nil || l == nil {
		t.Fatalf("Recognize(%q) = %v, %v", argv, l, err)
	}
	return l
}

// TestResolveLatestThenCheck: lock time resolves latest to an exact
// version; later checks pass until the registry changes.
func TestResolveLatestThenCheck(t *testing.T) {
	t.Parallel()
	fake, srv := newFakeRegistry(t)
	fake.publishNPM("@acme/x", "1.4.2", "code v1.4.2", "latest")
	reg := &Registry{NPM: srv.URL}
	ctx := context.Background()
	p, err := reg.Resolve(ctx, npmLaunch(t, "npx", "-y", "@acme/x"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "1.4.2" || p.Integrity != integrityOf("code v1.4.2") || p.Requested != "" {
		t.Fatalf("pin %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	v, err := reg.Check(ctx, p)
	if err != nil || len(v.Changed) != 0 || v.Latest != "" {
		t.Fatalf("check %+v, %v", v, err)
	}
	fake.publishNPM("@acme/x", "1.5.0", "code v1.5.0", "latest")
	if v, err = reg.Check(ctx, p); err != nil || len(v.Changed) != 0 || v.Latest != "1.5.0" {
		t.Fatalf("after a new release: %+v, %v (want a note only)", v, err)
	}
}

// TestSameVersionIntegritySwap: the registry (or a mirror) serves other
// contents under the locked version; the check fails.
func TestSameVersionIntegritySwap(t *testing.T) {
	t.Parallel()
	fake, srv := newFakeRegistry(t)
	fake.publishNPM("acme", "1.0.0", "honest", "latest")
	reg := &Registry{NPM: srv.URL}
	p, err := reg.Resolve(context.Background(), npmLaunch(t, "npx", "-y", "acme"))
	if err != nil {
		t.Fatal(err)
	}
	fake.publishNPM("acme", "1.0.0", "backdoored", "latest")
	v, err := reg.Check(context.Background(), p)
	if err != nil || len(v.Changed) != 1 || v.Changed[0] != ChangedIntegrity {
		t.Fatalf("check %+v, %v; want integrity-changed", v, err)
	}
	delete(fake.npm["acme"], "1.0.0")
	if v, _ = reg.Check(context.Background(), p); len(v.Changed) != 1 || v.Changed[0] != ChangedMissing {
		t.Fatalf("unpublished: %+v", v)
	}
}

// TestPyPIFileAddedToOldRelease: a new file in an old release (a wheel
// added later) changes the release's contents.
func TestPyPIFileAddedToOldRelease(t *testing.T) {
	t.Parallel()
	fake, srv := newFakeRegistry(t)
	files := map[string]string{"acme_mcp-1.0.tar.gz": strings.Repeat("a", 64)}
	fake.publishPyPI("acme-mcp", "1.0", true, files)
	reg := &Registry{PyPI: srv.URL}
	p, err := reg.Resolve(context.Background(), npmLaunch(t, "uvx", "Acme_MCP"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "acme-mcp" || p.Version != "1.0" || len(p.Files) != 1 || p.Validate() != nil {
		t.Fatalf("pin %+v", p)
	}
	files["acme_mcp-1.0-py3-none-any.whl"] = strings.Repeat("b", 64)
	fake.publishPyPI("acme-mcp", "1.0", true, files)
	v, err := reg.Check(context.Background(), p)
	if err != nil || len(v.Changed) != 1 || v.Changed[0] != ChangedFiles {
		t.Fatalf("check %+v, %v; want files-changed", v, err)
	}
}

// TestHostileVersionFromRegistryRefused: a registry that answers with a
// version that is not plain gets nothing locked.
func TestHostileVersionFromRegistryRefused(t *testing.T) {
	t.Parallel()
	fake, srv := newFakeRegistry(t)
	for _, v := range []string{"1.0.0 && calc", "github:evil/x", "1.0.0\ncalc", "--registry=x"} {
		fake.npm["acme"] = map[string]any{"latest": map[string]any{"name": "acme", "version": v, "dist": map[string]any{"integrity": integrityOf("x")}}}
		fake.pypi["acme"] = map[string]any{"": map[string]any{"info": map[string]any{"name": "acme", "version": v}}}
		reg := &Registry{NPM: srv.URL, PyPI: srv.URL}
		if p, err := reg.Resolve(context.Background(), npmLaunch(t, "npx", "-y", "acme")); err == nil {
			t.Errorf("npm version %q: pinned %+v", v, p)
		}
		if p, err := reg.Resolve(context.Background(), npmLaunch(t, "uvx", "acme")); err == nil {
			t.Errorf("pypi version %q: pinned %+v", v, p)
		}
	}
}

// TestRegistryAnswersForAnotherPackage: a registry that answers a lookup
// of one package with another's document is refused.
func TestRegistryAnswersForAnotherPackage(t *testing.T) {
	t.Parallel()
	fake, srv := newFakeRegistry(t)
	fake.npm["acme"] = map[string]any{"latest": map[string]any{"name": "evil", "version": "1.0.0", "dist": map[string]any{"integrity": integrityOf("x")}}}
	if _, err := (&Registry{NPM: srv.URL}).Resolve(context.Background(), npmLaunch(t, "npx", "acme")); err == nil {
		t.Fatal("accepted another package's document")
	}
}

// TestRegistryURLMustBeHTTPS: plain http only on loopback.
func TestRegistryURLMustBeHTTPS(t *testing.T) {
	t.Parallel()
	for u, ok := range map[string]bool{
		"https://registry.npmjs.org": true, "http://127.0.0.1:8080": true, "http://localhost:1": true, "http://[::1]:1": true,
		"http://registry.example": false, "ftp://x": false, "https://user:pw@x": false, "registry.npmjs.org": false,
	} {
		if err := CheckBaseURL(u); (err == nil) != ok {
			t.Errorf("CheckBaseURL(%q) = %v", u, err)
		}
	}
}

// TestOversizedRegistryDocumentRefused: a registry cannot make the lock
// command read without bound.
func TestOversizedRegistryDocumentRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"name":"acme","version":"1.0.0","pad":"`))
		chunk := strings.Repeat("a", 1<<20)
		for i := 0; i < maxRegistryDoc>>20+2; i++ {
			w.Write([]byte(chunk))
		}
	}))
	defer srv.Close()
	_, err := (&Registry{NPM: srv.URL}).Resolve(context.Background(), npmLaunch(t, "npx", "acme"))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}

// TestRedirectToAnotherHostRefused: the registry cannot send the lookup
// elsewhere.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"name": "acme", "version": "1.0.0", "dist": map[string]any{"integrity": integrityOf("x")}})
	}))
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/acme/latest", http.StatusFound))
	defer srv.Close()
	if _, err := (&Registry{NPM: srv.URL}).Resolve(context.Background(), npmLaunch(t, "npx", "acme")); err == nil {
		t.Fatal("followed a redirect to another host")
	}
}

// TestUnpinnedImageCannotBeResolved: an image by tag cannot be locked.
func TestUnpinnedImageCannotBeResolved(t *testing.T) {
	t.Parallel()
	_, err := (&Registry{}).Resolve(context.Background(), npmLaunch(t, "docker", "run", "-i", "mcp/fetch:latest"))
	if !errors.Is(err, ErrNotLockable) {
		t.Fatalf("got %v", err)
	}
}
