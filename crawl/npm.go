package crawl

import (
	"context"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Registry limits: every body read from the registry is bounded.
const (
	// maxSearchBody bounds one search page: 250 results of a few KiB.
	maxSearchBody = 8 << 20
	// maxPackument bounds a package's abbreviated metadata; packages with
	// thousands of versions reach a few MiB.
	maxPackument = 32 << 20
	// maxTarball bounds a package tarball; MCP servers are a few hundred
	// KiB, the largest packages on npm a few dozen MiB.
	maxTarball = 64 << 20
	// searchPageSize is the registry's largest page.
	searchPageSize = 250
)

// UserAgent identifies the crawler to registries.
const UserAgent = "mcpseal-crawler/1 (+https://github.com/mcpseal/mcpseal; reads tool listings, never calls tools)"

// npmClient talks to an npm registry, politely: one request at a time,
// at least minInterval apart.
type npmClient struct {
	base        *url.URL
	http        *http.Client
	minInterval time.Duration

	mu   sync.Mutex
	last time.Time
}

func newNPMClient(registry string, hc *http.Client, minInterval time.Duration) (*npmClient, error) {
	u, err := url.Parse(strings.TrimSuffix(registry, "/") + "/")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("crawl: the registry must be an http(s) URL")
	}
	return &npmClient{base: u, http: hc, minInterval: minInterval}, nil
}

func (c *npmClient) get(ctx context.Context, u *url.URL, accept string, limit int64) ([]byte, error) {
	c.mu.Lock()
	if wait := c.minInterval - time.Since(c.last); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			c.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	c.last = time.Now()
	c.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", UserAgent)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("crawl: registry answered %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errors.New("crawl: registry answer larger than its limit")
	}
	return b, nil
}

// search returns package names matching text, at most limit of them.
func (c *npmClient) search(ctx context.Context, text string, limit int) ([]string, error) {
	var names []string
	for from := 0; len(names) < limit; from += searchPageSize {
		u := c.base.JoinPath("-/v1/search")
		q := url.Values{"text": {text}, "size": {fmt.Sprint(searchPageSize)}, "from": {fmt.Sprint(from)}}
		u.RawQuery = q.Encode()
		b, err := c.get(ctx, u, "application/json", maxSearchBody)
		if err != nil {
			return nil, err
		}
		var page struct {
			Objects []struct {
				Package struct {
					Name string `json:"name"`
				} `json:"package"`
			} `json:"objects"`
			Total int `json:"total"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, errors.New("crawl: malformed search answer")
		}
		for _, o := range page.Objects {
			if validPackageName(o.Package.Name) && len(names) < limit {
				names = append(names, o.Package.Name)
			}
		}
		if len(page.Objects) < searchPageSize || from+searchPageSize >= page.Total {
			break
		}
	}
	return names, nil
}

// A release is one published version of a package.
type release struct {
	Name, Version, Tarball, Integrity string
}

// resolve returns the release of name at version ("" for the latest).
func (c *npmClient) resolve(ctx context.Context, name, version string) (*release, error) {
	b, err := c.get(ctx, c.base.JoinPath(name), "application/vnd.npm.install-v1+json", maxPackument)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Name     string            `json:"name"`
		DistTags map[string]string `json:"dist-tags"`
		Versions map[string]struct {
			Dist struct {
				Tarball   string `json:"tarball"`
				Integrity string `json:"integrity"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.Name != name {
		return nil, errors.New("malformed-metadata")
	}
	if version == "" {
		version = doc.DistTags["latest"]
	}
	v, ok := doc.Versions[version]
	if !ok {
		return nil, errors.New("no-such-version")
	}
	return &release{Name: name, Version: version, Tarball: v.Dist.Tarball, Integrity: v.Dist.Integrity}, nil
}

// download fetches a release's tarball and checks its SHA-512 integrity.
// The tarball must come from the registry's own origin: metadata cannot
// send the crawler elsewhere.
func (c *npmClient) download(ctx context.Context, r *release) ([]byte, error) {
	u, err := url.Parse(r.Tarball)
	if err != nil || u.Scheme != c.base.Scheme || u.Host != c.base.Host {
		return nil, errors.New("foreign-tarball")
	}
	want, ok := strings.CutPrefix(r.Integrity, "sha512-")
	sum, err := base64.StdEncoding.Strict().DecodeString(want)
	if !ok || err != nil || len(sum) != sha512.Size {
		return nil, errors.New("no-integrity")
	}
	b, err := c.get(ctx, u, "application/octet-stream", maxTarball)
	if err != nil {
		return nil, err
	}
	got := sha512.Sum512(b)
	if subtle.ConstantTimeCompare(got[:], sum) != 1 {
		return nil, errors.New("integrity-mismatch")
	}
	return b, nil
}

// validPackageName accepts npm package names (lowercase, URL-safe, at
// most 214 bytes, optionally scoped).
func validPackageName(n string) bool {
	if n == "" || len(n) > 214 || n[0] == '.' || n[0] == '_' {
		return false
	}
	rest := n
	if strings.HasPrefix(n, "@") {
		scope, name, ok := strings.Cut(n[1:], "/")
		if !ok || scope == "" || name == "" || strings.Contains(name, "/") {
			return false
		}
		rest = scope + name
	} else if strings.Contains(n, "/") {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
