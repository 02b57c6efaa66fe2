package releasebuild

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The SBOM is CycloneDX 1.5 JSON, made from the build information the Go
// toolchain writes into every binary (what `go version -m` prints): the
// main module and every module linked into any of the release's binaries,
// each with its version, purl and go.sum hash. Nothing is guessed from
// go.mod; a module that is not linked in is not listed.

// bom is the subset of CycloneDX 1.5 the release writes.
type bom struct {
	BOMFormat    string      `json:"bomFormat"`
	SpecVersion  string      `json:"specVersion"`
	SerialNumber string      `json:"serialNumber,omitempty"`
	Version      int         `json:"version"`
	Metadata     bomMetadata `json:"metadata"`
	Components   []component `json:"components"`
}

type bomMetadata struct {
	Timestamp string     `json:"timestamp"`
	Tools     bomTools   `json:"tools"`
	Component component  `json:"component"`
	Props     []property `json:"properties,omitempty"`
}

type bomTools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// goPURL is the package URL of a Go module version.
func goPURL(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + url.PathEscape(version)
	}
	return p
}

// sbom returns the CycloneDX document for the binaries (platform -> path).
func sbom(release string, binaries map[string]string, mtime time.Time) ([]byte, error) {
	var mainPath, goVersion string
	mods := map[string]component{}
	platforms := slices.Sorted(maps.Keys(binaries))
	for _, plat := range platforms {
		bi, err := buildinfo.ReadFile(binaries[plat])
		if err != nil {
			return nil, fmt.Errorf("build information of the %s binary: %w", plat, err)
		}
		if mainPath != "" && (bi.Main.Path != mainPath || bi.GoVersion != goVersion) {
			return nil, fmt.Errorf("the %s binary was built from %s with %s, the others from %s with %s", plat, bi.Main.Path, bi.GoVersion, mainPath, goVersion)
		}
		mainPath, goVersion = bi.Main.Path, bi.GoVersion
		for _, d := range bi.Deps {
			m := d
			local := d.Replace != nil && d.Replace.Version == "(devel)"
			if d.Replace != nil && !local {
				m = d.Replace
			}
			ref := goPURL(m.Path, m.Version)
			c, ok := mods[ref]
			if !ok {
				c = component{Type: "library", BOMRef: ref, Name: m.Path, Version: m.Version, PURL: ref}
				if m.Sum != "" {
					c.Properties = append(c.Properties, property{"go:sum", m.Sum})
				}
				switch {
				case local:
					// A module patched in this repository (third_party/):
					// the upstream release it was taken from, and where the
					// patched copy lives.
					c.Properties = append(c.Properties, property{"go:replaced-by", d.Replace.Path})
				case d.Replace != nil:
					c.Properties = append(c.Properties, property{"go:replaces", d.Path + "@" + d.Version})
				}
			}
			c.Properties = append(c.Properties, property{"mcpseal:platform", plat})
			mods[ref] = c
		}
	}
	main := component{Type: "application", BOMRef: goPURL(mainPath, "v"+release), Name: "mcpseal", Version: release, PURL: goPURL(mainPath, "v"+release)}
	doc := bom{
		BOMFormat:   "CycloneDX",
		SpecVersion: "1.5",
		Version:     1,
		Metadata: bomMetadata{
			Timestamp: mtime.UTC().Format(time.RFC3339),
			Tools:     bomTools{Components: []component{{Type: "application", Name: "mcpseal scripts/release"}}},
			Component: main,
			Props:     []property{{"go:version", goVersion}, {"mcpseal:platforms", strings.Join(platforms, " ")}},
		},
		Components: []component{},
	}
	for _, ref := range slices.Sorted(maps.Keys(mods)) {
		doc.Components = append(doc.Components, mods[ref])
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
