package pkgpin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// pypiDoc is the part of a PyPI JSON API document (GET /pypi/NAME/json or
// /pypi/NAME/VERSION/json) a pin needs.
type pypiDoc struct {
	Info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"info"`
	URLs []struct {
		Filename string `json:"filename"`
		Digests  struct {
			SHA256 string `json:"sha256"`
		} `json:"digests"`
		Yanked bool `json:"yanked"`
	} `json:"urls"`
}

// pypiLatest returns the project's latest release as the JSON API reports
// it.
func (r *Registry) pypiLatest(ctx context.Context, name string) (string, error) {
	var doc pypiDoc
	if err := r.pypiGet(ctx, name, "", &doc); err != nil {
		return "", err
	}
	if !ValidVersion(PyPI, doc.Info.Version) {
		return "", fmt.Errorf("pkgpin: PyPI gave %s latest version %s, which is not a plain version; refusing it", name, quote(doc.Info.Version))
	}
	return doc.Info.Version, nil
}

// pypiVersion fetches one release and records every file it serves.
func (r *Registry) pypiVersion(ctx context.Context, name, version string) (*Package, error) {
	if !ValidVersion(PyPI, version) {
		return nil, fmt.Errorf("pkgpin: PyPI version %s cannot be looked up", quote(version))
	}
	var doc pypiDoc
	if err := r.pypiGet(ctx, name, version, &doc); err != nil {
		return nil, err
	}
	if NormalizePyPI(doc.Info.Name) != NormalizePyPI(name) || doc.Info.Version != version {
		return nil, fmt.Errorf("pkgpin: PyPI answered for another release than %s %s", name, version)
	}
	p := &Package{Ecosystem: PyPI, Name: NormalizePyPI(name), Version: version}
	for _, u := range doc.URLs {
		f := File{Name: u.Filename, SHA256: strings.ToLower(u.Digests.SHA256)}
		if !pypiFileRe().MatchString(f.Name) || !sha256Re().MatchString(f.SHA256) {
			return nil, fmt.Errorf("pkgpin: PyPI %s %s lists a file without a valid name and sha256", name, version)
		}
		p.Files = append(p.Files, f)
	}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("pkgpin: PyPI %s %s has no files", name, version)
	}
	if len(p.Files) > maxFiles {
		return nil, fmt.Errorf("pkgpin: PyPI %s %s has more than %d files", name, version, maxFiles)
	}
	slices.SortFunc(p.Files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(p.Files); i++ {
		if p.Files[i].Name == p.Files[i-1].Name {
			return nil, fmt.Errorf("pkgpin: PyPI %s %s lists one file twice", name, version)
		}
	}
	return p, nil
}

func (r *Registry) pypiGet(ctx context.Context, name, version string, doc *pypiDoc) error {
	if !ValidName(PyPI, name) {
		return fmt.Errorf("pkgpin: PyPI project %s cannot be looked up", quote(name))
	}
	path := "/pypi/" + url.PathEscape(NormalizePyPI(name)) + "/json"
	if version != "" {
		path = "/pypi/" + url.PathEscape(NormalizePyPI(name)) + "/" + url.PathEscape(version) + "/json"
	}
	err := r.getJSON(ctx, r.pypiBase(), path, doc)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: PyPI %s %s", ErrNotFound, name, version)
	}
	return err
}
