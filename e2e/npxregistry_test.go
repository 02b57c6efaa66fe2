package e2e

import (
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testNPXFromRegistry runs the README's line, `npx -y mcpseal@VERSION
// demo`, on a machine with only Node.js: a fresh HOME and npm cache, and
// a registry on loopback that serves exactly the release's packed
// tarballs (metadata made from their own package.json). npx resolves the
// launcher, picks the platform package through its optional
// dependencies, installs both into its cache and runs the demo.
func testNPXFromRegistry(t *testing.T, r *releaseSet) {
	needNode(t)
	tarballs := map[string]string{ // package name -> tarball file
		"mcpseal":             "mcpseal-" + releaseVersion + ".tgz",
		r.target.NPMPackage(): "mcpseal-" + strings.TrimPrefix(r.target.NPMPackage(), "@mcpseal/") + "-" + releaseVersion + ".tgz",
	}
	var mu sync.Mutex
	var asked []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		path, err := url.PathUnescape(req.URL.EscapedPath())
		if err != nil {
			http.Error(w, "bad path", http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked = append(asked, path)
		mu.Unlock()
		if file, ok := strings.CutPrefix(path, "/-/tarballs/"); ok {
			for _, f := range tarballs {
				if f == file {
					w.Header().Set("Content-Type", "application/octet-stream")
					w.Write(readBytes(t, r.path(f)))
					return
				}
			}
			http.NotFound(w, req)
			return
		}
		name := strings.TrimPrefix(path, "/")
		file, ok := tarballs[name]
		if !ok {
			http.NotFound(w, req)
			return
		}
		tgz := readBytes(t, r.path(file))
		var manifest map[string]any
		if err := json.Unmarshal(untarFile(t, tgz, "package/package.json"), &manifest); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s1 := sha1.Sum(tgz)
		s512 := sha512.Sum512(tgz)
		manifest["_id"] = name + "@" + releaseVersion
		manifest["dist"] = map[string]any{
			"tarball":   srv.URL + "/-/tarballs/" + file,
			"shasum":    hex.EncodeToString(s1[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": releaseVersion},
			"versions":  map[string]any{releaseVersion: manifest},
		})
	}))
	defer srv.Close()

	userHome := t.TempDir()
	env := environ(t, home(t), "HOME="+userHome, "npm_config_cache="+filepath.Join(userHome, ".npm"), "npm_config_userconfig="+filepath.Join(userHome, ".npmrc"),
		"npm_config_registry="+srv.URL+"/", "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
	dir := t.TempDir()
	start := time.Now()
	out, stderr, code := runIn(t, dir, env, 120*time.Second, "npx", "-y", "mcpseal@"+releaseVersion, "demo")
	if code != 0 || !strings.Contains(out, "CONTRACT CHANGED") {
		t.Fatalf("npx -y mcpseal@%s demo: exit %d\nstdout:\n%s\nstderr:\n%s", releaseVersion, code, out, stderr)
	}
	t.Logf("npx -y mcpseal@%s demo from a fresh cache: %v", releaseVersion, time.Since(start).Round(time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	for _, p := range asked {
		if !strings.HasPrefix(p, "/-/tarballs/") && !slices.Contains([]string{"/mcpseal", "/" + r.target.NPMPackage()}, p) {
			t.Errorf("npx asked the registry for %s", p)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("npx wrote into the folder it ran in: %v", ents)
	}
}
