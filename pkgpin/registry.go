package pkgpin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Default registry base URLs, and the environment variables that change
// them (flags of the lock command change them too).
const (
	DefaultNPMRegistry = "https://registry.npmjs.org"
	DefaultPyPIURL     = "https://pypi.org"
	NPMRegistryEnv     = "MCPSEAL_NPM_REGISTRY"
	PyPIURLEnv         = "MCPSEAL_PYPI_URL"
)

const (
	// maxRegistryDoc bounds one metadata document. A version document of
	// npm or PyPI is a few KiB; some carry a long readme, so leave room.
	maxRegistryDoc = 8 << 20
	// requestTimeout bounds one registry request, body included.
	requestTimeout = 20 * time.Second
	maxRedirects   = 3
)

// ErrNotFound: the registry has no such package or version.
var ErrNotFound = errors.New("pkgpin: not found in the registry")

// Registry resolves and checks pins against npm- and PyPI-compatible
// registries. It is the only part of the package that uses the network,
// and only lock and lock --check use it; running a locked server never
// does.
type Registry struct {
	// NPM is the npm registry's base URL (DefaultNPMRegistry when empty).
	NPM string
	// PyPI is the base URL of a PyPI JSON API (DefaultPyPIURL when empty):
	// the registry fetches /pypi/NAME/json and /pypi/NAME/VERSION/json.
	PyPI string
	// Client makes the requests; nil uses a client with a timeout that
	// follows at most 3 redirects, each to the same host.
	Client *http.Client
}

// RegistryFromEnv returns a Registry whose URLs come from the environment
// variables NPMRegistryEnv and PyPIURLEnv, where set.
func RegistryFromEnv(getenv func(string) string) *Registry {
	return &Registry{NPM: getenv(NPMRegistryEnv), PyPI: getenv(PyPIURLEnv)}
}

// CheckBaseURL accepts an https URL, or an http URL on a loopback host (a
// local mirror or a test registry).
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("registry URL %s is not an absolute http(s) URL", quote(raw))
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("registry URL %s must be https (plain http only on a loopback address)", quote(raw))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (r *Registry) npmBase() string  { return strings.TrimRight(or(r.NPM, DefaultNPMRegistry), "/") }
func (r *Registry) pypiBase() string { return strings.TrimRight(or(r.PyPI, DefaultPyPIURL), "/") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (r *Registry) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{
		Timeout: requestTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
				return errors.New("redirect to another host")
			}
			return nil
		},
	}
}

// getJSON fetches base+path and decodes the JSON body into v. A 404 is
// ErrNotFound.
func (r *Registry) getJSON(ctx context.Context, base, path string, v any) error {
	if err := CheckBaseURL(base); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "mcpseal-lock")
	resp, err := r.client().Do(req)
	if err != nil {
		return fmt.Errorf("registry %s: %w", base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("registry %s answered %s for %s", base, resp.Status, path)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistryDoc+1))
	if err != nil {
		return fmt.Errorf("registry %s: reading %s: %w", base, path, err)
	}
	if len(body) > maxRegistryDoc {
		return fmt.Errorf("registry %s: %s is larger than %d bytes", base, path, maxRegistryDoc)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("registry %s: %s is not the expected JSON", base, path)
	}
	return nil
}

// Resolve pins launch l: it asks the registry which exact version l means
// (resolving a tag, or latest, at this moment) and what the registry
// serves for it. An OCI launch needs no registry: its digest is the pin
// (and one without a digest cannot be pinned).
func (r *Registry) Resolve(ctx context.Context, l *Launch) (*Package, error) {
	switch l.Ecosystem {
	case OCI:
		if l.Digest == "" {
			return nil, fmt.Errorf("%w: %s: image %s is not pinned by digest; write it as %s@sha256:...", ErrNotLockable, l.Tool, l.Name, l.Name)
		}
		return &Package{Ecosystem: OCI, Name: l.Name, Digest: l.Digest}, nil
	case NPM:
		want := or(l.Version, or(l.Tag, "latest"))
		p, err := r.npmVersion(ctx, l.Name, want)
		if err != nil {
			return nil, err
		}
		p.Requested = l.Tag
		return p, nil
	case PyPI:
		version := l.Version
		if version == "" {
			latest, err := r.pypiLatest(ctx, l.Name)
			if err != nil {
				return nil, err
			}
			version = latest
		}
		p, err := r.pypiVersion(ctx, l.Name, version)
		if err != nil {
			return nil, err
		}
		p.Requested = l.Tag
		return p, nil
	}
	return nil, fmt.Errorf("pkgpin: unknown ecosystem %q", l.Ecosystem)
}

// A Verdict is what the registry says now about a locked package.
type Verdict struct {
	// Changed lists how the registry's contents for the locked version
	// differ from the lock (stable codes, see the Changed* constants);
	// empty when they match.
	Changed []string
	// Latest is the registry's newest release when it is not the locked
	// one (a note, not a failure); "" otherwise or when unknown.
	Latest string
}

// Codes in Verdict.Changed.
const (
	ChangedMissing   = "version-missing"   // the registry no longer serves the locked version
	ChangedIntegrity = "integrity-changed" // npm: another dist.integrity for the same version
	ChangedFiles     = "files-changed"     // PyPI: a file added, removed or with another sha256
)

// Check compares what the registry serves now for p's version with p. An
// OCI pin is its own content address and is not fetched.
func (r *Registry) Check(ctx context.Context, p *Package) (Verdict, error) {
	var v Verdict
	switch p.Ecosystem {
	case OCI:
		return v, nil
	case NPM:
		now, err := r.npmVersion(ctx, p.Name, p.Version)
		if errors.Is(err, ErrNotFound) {
			v.Changed = append(v.Changed, ChangedMissing)
			return v, nil
		}
		if err != nil {
			return v, err
		}
		if now.Integrity != p.Integrity {
			v.Changed = append(v.Changed, ChangedIntegrity)
		}
		if latest, err := r.npmVersion(ctx, p.Name, or(p.Requested, "latest")); err == nil && latest.Version != p.Version {
			v.Latest = latest.Version
		}
		return v, nil
	case PyPI:
		now, err := r.pypiVersion(ctx, p.Name, p.Version)
		if errors.Is(err, ErrNotFound) {
			v.Changed = append(v.Changed, ChangedMissing)
			return v, nil
		}
		if err != nil {
			return v, err
		}
		if !sameFiles(now.Files, p.Files) {
			v.Changed = append(v.Changed, ChangedFiles)
		}
		if latest, err := r.pypiLatest(ctx, p.Name); err == nil && latest != p.Version {
			v.Latest = latest
		}
		return v, nil
	}
	return v, fmt.Errorf("pkgpin: unknown ecosystem %q", p.Ecosystem)
}

func sameFiles(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
