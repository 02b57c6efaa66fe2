package pkgpin

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// npmVersionDoc is the part of an npm version document (GET
// /NAME/VERSION or /NAME/TAG) a pin needs.
type npmVersionDoc struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Dist    struct {
		Integrity string `json:"integrity"`
		Shasum    string `json:"shasum"`
	} `json:"dist"`
}

// npmVersion fetches the version document of name at want (an exact
// version or a dist-tag) and checks everything in it that a pin keeps.
func (r *Registry) npmVersion(ctx context.Context, name, want string) (*Package, error) {
	if !ValidName(NPM, name) || !(ValidVersion(NPM, want) || isNPMTag(want)) {
		return nil, fmt.Errorf("pkgpin: npm %s@%s cannot be looked up", quote(name), quote(want))
	}
	// Scoped names keep their "/" ("@scope/name/1.0.0"), which npm's
	// registry and its mirrors serve.
	path := "/" + strings.Replace(url.PathEscape(name), "%2F", "/", 1) + "/" + url.PathEscape(want)
	var doc npmVersionDoc
	if err := r.getJSON(ctx, r.npmBase(), path, &doc); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%w: npm %s@%s", ErrNotFound, name, want)
		}
		return nil, err
	}
	if doc.Name != name {
		return nil, fmt.Errorf("pkgpin: the npm registry answered for another package than %s", name)
	}
	if !ValidVersion(NPM, doc.Version) {
		return nil, fmt.Errorf("pkgpin: the npm registry gave %s version %s, which is not a plain version; refusing it", name, quote(doc.Version))
	}
	if ValidVersion(NPM, want) && doc.Version != want {
		return nil, fmt.Errorf("pkgpin: the npm registry answered version %s when asked for %s", doc.Version, want)
	}
	integrity := doc.Dist.Integrity
	if integrity == "" {
		// Releases from before 2017 carry only a SHA-1.
		raw, err := hex.DecodeString(doc.Dist.Shasum)
		if err != nil || len(raw) != 20 {
			return nil, fmt.Errorf("pkgpin: npm %s@%s has no integrity", name, doc.Version)
		}
		integrity = "sha1-" + base64.StdEncoding.EncodeToString(raw)
	}
	if strings.Contains(integrity, " ") {
		// Several hashes: keep the strongest (sha512), as npm does.
		fields := strings.Fields(integrity)
		i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, "sha512-") })
		if i < 0 {
			return nil, fmt.Errorf("pkgpin: npm %s@%s has no sha512 integrity", name, doc.Version)
		}
		integrity = fields[i]
	}
	if !integrityRe().MatchString(integrity) {
		return nil, fmt.Errorf("pkgpin: npm %s@%s has an integrity mcpseal cannot read", name, doc.Version)
	}
	return &Package{Ecosystem: NPM, Name: name, Version: doc.Version, Integrity: integrity}, nil
}
