package crawl

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// fakeRegistry is an npm registry on loopback serving packages the test
// builds. It records every path asked for.
type fakeRegistry struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	// pkgs: name -> version -> files
	pkgs     map[string]map[string]map[string]string
	latest   map[string]string
	keywords map[string][]string
	tarballs map[string][]byte // path -> bytes
	asked    []string
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	r := &fakeRegistry{t: t, pkgs: map[string]map[string]map[string]string{}, latest: map[string]string{},
		keywords: map[string][]string{}, tarballs: map[string][]byte{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// publish adds a version (the new latest) of a package made of files.
func (r *fakeRegistry) publish(name, version string, keywords []string, files map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pkgs[name] == nil {
		r.pkgs[name] = map[string]map[string]string{}
	}
	r.pkgs[name][version] = files
	r.latest[name] = version
	r.keywords[name] = keywords
	r.tarballs[tarballPath(name, version)] = makeTarball(r.t, files)
}

func tarballPath(name, version string) string {
	base := name[strings.LastIndex(name, "/")+1:]
	return "/" + name + "/-/" + base + "-" + version + ".tgz"
}

func makeTarball(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		body := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func (r *fakeRegistry) askedFor(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.asked {
		if strings.Contains(a, sub) {
			return true
		}
	}
	return false
}

func (r *fakeRegistry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	path, _ := url.PathUnescape(req.URL.EscapedPath())
	r.asked = append(r.asked, path)
	if req.Header.Get("User-Agent") == "" {
		http.Error(w, "who are you", http.StatusForbidden)
		return
	}
	if path == "/-/v1/search" {
		kw := strings.TrimPrefix(req.URL.Query().Get("text"), "keywords:")
		var objs []any
		names := make([]string, 0, len(r.keywords))
		for n := range r.keywords {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, k := range r.keywords[n] {
				if k == kw {
					objs = append(objs, map[string]any{"package": map[string]any{"name": n, "version": r.latest[n]}})
				}
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"objects": objs, "total": len(objs)})
		return
	}
	if tgz, ok := r.tarballs[path]; ok {
		w.Write(tgz)
		return
	}
	name := strings.TrimPrefix(path, "/")
	versions, ok := r.pkgs[name]
	if !ok {
		http.NotFound(w, req)
		return
	}
	vs := map[string]any{}
	for v, files := range versions {
		tgz := r.tarballs[tarballPath(name, v)]
		sum := sha512.Sum512(tgz)
		sha := sha1.Sum(tgz)
		var pj map[string]any
		json.Unmarshal([]byte(files["package.json"]), &pj)
		pj["dist"] = map[string]any{
			"tarball":   r.srv.URL + tarballPath(name, v),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
			"shasum":    hex.EncodeToString(sha[:]),
		}
		vs[v] = pj
	}
	json.NewEncoder(w).Encode(map[string]any{"name": name, "dist-tags": map[string]string{"latest": r.latest[name]}, "versions": vs})
}

// serverJS is a minimal MCP server in Node: it lists tools in two pages
// (tools holds JSON for each page).
func serverJS(page1, page2 string) string {
	return fmt.Sprintf(`#!/usr/bin/env node
const rl = require('readline').createInterface({input: process.stdin});
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
console.log('starting weather server');
rl.on('line', (line) => {
  let m; try { m = JSON.parse(line); } catch (e) { return; }
  if (m.id === undefined) return;
  if (m.method === 'initialize') return send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'w', version: '1'}}});
  if (m.method === 'tools/list') {
    if (!m.params || !m.params.cursor) return send({jsonrpc: '2.0', id: m.id, result: {tools: [%s], nextCursor: 'page-2'}});
    return send({jsonrpc: '2.0', id: m.id, result: {tools: [%s]}});
  }
  if (m.method === 'tools/call') { require('fs').writeFileSync(process.env.HOME + '/../CALLED', 'x'); }
  send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'not found'}});
});
`, page1, page2)
}

func pkgJSON(name, version string, extra map[string]any) string {
	m := map[string]any{"name": name, "version": version}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}
