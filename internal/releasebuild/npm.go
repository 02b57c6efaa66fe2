package releasebuild

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/release"
)

// The npm packages follow the model esbuild, Biome and Turborepo use: a
// small launcher package, mcpseal, whose bin is launcher/mcpseal.js, and
// one package per platform, @mcpseal/OS-CPU (npm's names: linux, darwin,
// win32; x64, arm64), holding only the binary and declaring its os and cpu
// so that npm installs just the one that fits. The launcher lists every
// platform package as an optional dependency at exactly its own version
// (versions move together) and records each binary's SHA-256 in
// digests.json, which it checks before it runs the binary. No package has
// an install script; nothing is fetched at run time.

//go:embed launcher/mcpseal.js
var launcherJS []byte

// digestsFormat is the format of the launcher's digests.json.
const digestsFormat = "mcpseal-npm-digests/1"

const repository = "git+https://github.com/mcpseal/mcpseal.git"

func (t Target) npmOS() string {
	if t.OS == "windows" {
		return "win32"
	}
	return t.OS
}

func (t Target) npmCPU() string {
	if t.Arch == "amd64" {
		return "x64"
	}
	return t.Arch
}

// NPMPackage is the platform package's name for t: "@mcpseal/linux-x64".
func (t Target) NPMPackage() string { return "@mcpseal/" + t.npmOS() + "-" + t.npmCPU() }

// The package.json files, members in npm's usual order (maps are written
// with sorted keys, so the files are the same on every build).
type repoJSON struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

var repo = repoJSON{Type: "git", URL: repository}

type platformJSON struct {
	Name            string   `json:"name"`
	Version         string   `json:"version"`
	Description     string   `json:"description"`
	Repository      repoJSON `json:"repository"`
	OS              []string `json:"os"`
	CPU             []string `json:"cpu"`
	Files           []string `json:"files"`
	PreferUnplugged bool     `json:"preferUnplugged"`
}

type launcherJSON struct {
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description"`
	Repository  repoJSON          `json:"repository"`
	Bin         map[string]string `json:"bin"`
	Files       []string          `json:"files"`
	Engines     map[string]string `json:"engines"`
	Optional    map[string]string `json:"optionalDependencies"`
}

type npmBinary struct {
	Package string `json:"package"`
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
}

type npmDigests struct {
	Format   string               `json:"format"`
	Version  string               `json:"version"`
	Binaries map[string]npmBinary `json:"binaries"`
}

// npmPackages writes the package folders under work, packs each with
// `npm pack` and returns the tarballs (file name -> bytes).
func npmPackages(ctx context.Context, version string, binaries map[Target][]byte, readme []byte, work string) (map[string][]byte, error) {
	dig := npmDigests{Format: digestsFormat, Version: version, Binaries: map[string]npmBinary{}}
	optional := map[string]string{}
	var dirs []string
	targets := make([]Target, 0, len(binaries))
	for t := range binaries {
		targets = append(targets, t)
	}
	slices.SortFunc(targets, func(a, b Target) int { return strings.Compare(a.NPMPackage(), b.NPMPackage()) })
	for _, t := range targets {
		name := t.NPMPackage()
		dir := filepath.Join(work, strings.TrimPrefix(name, "@mcpseal/"))
		exe := "bin/" + t.exe()
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, exe), binaries[t], 0o755); err != nil {
			return nil, err
		}
		pj := platformJSON{
			Name: name, Version: version,
			Description: fmt.Sprintf("The mcpseal binary for %s %s; installed by the mcpseal package", t.npmOS(), t.npmCPU()),
			Repository:  repo, OS: []string{t.npmOS()}, CPU: []string{t.npmCPU()},
			Files: []string{"bin/"}, PreferUnplugged: true,
		}
		if err := writeJSONFile(filepath.Join(dir, "package.json"), pj); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "README.md"), fmt.Appendf(nil, "# %s\n\nThe mcpseal %s binary for %s %s. Install the `mcpseal` package instead: it\nchecks this binary's SHA-256 before it runs it.\n", name, version, t.npmOS(), t.npmCPU()), 0o644); err != nil {
			return nil, err
		}
		d, err := release.Digest(bytes.NewReader(binaries[t]))
		if err != nil {
			return nil, err
		}
		dig.Binaries[t.npmOS()+"-"+t.npmCPU()] = npmBinary{Package: name, Path: exe, SHA256: d}
		optional[name] = version
		dirs = append(dirs, dir)
	}
	dir := filepath.Join(work, "mcpseal")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "mcpseal.js"), launcherJS, 0o755); err != nil {
		return nil, err
	}
	if err := writeJSONFile(filepath.Join(dir, "digests.json"), dig); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), readme, 0o644); err != nil {
		return nil, err
	}
	pj := launcherJSON{
		Name: "mcpseal", Version: version,
		Description: "Pin and gate the MCP servers your clients run",
		Repository:  repo,
		Bin:         map[string]string{"mcpseal": "bin/mcpseal.js"},
		Files:       []string{"bin/", "digests.json"},
		Engines:     map[string]string{"node": ">=18"},
		Optional:    optional,
	}
	if err := writeJSONFile(filepath.Join(dir, "package.json"), pj); err != nil {
		return nil, err
	}
	dirs = append(dirs, dir)

	out := map[string][]byte{}
	packed := filepath.Join(work, "packed")
	if err := os.MkdirAll(packed, 0o755); err != nil {
		return nil, err
	}
	for _, d := range dirs {
		name, err := npmPack(ctx, d, packed, work)
		if err != nil {
			return nil, err
		}
		if out[name], err = os.ReadFile(filepath.Join(packed, name)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// npmPack runs `npm pack` in dir, offline, with a private cache and
// config, and returns the tarball's file name.
func npmPack(ctx context.Context, dir, dest, work string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is required to pack the npm packages: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "pack", "--json", "--offline", "--ignore-scripts", "--pack-destination", dest)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(work, "npm-cache"), "npm_config_userconfig="+filepath.Join(work, "npmrc"), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack %s: %v\n%s", filepath.Base(dir), err, stderr.Bytes())
	}
	var res []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res) != 1 || !release.ValidName(res[0].Filename) {
		return "", fmt.Errorf("npm pack %s printed an unexpected result", filepath.Base(dir))
	}
	return res[0].Filename, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, b, "", "  "); err != nil {
		return err
	}
	ind.WriteByte('\n')
	return os.WriteFile(path, ind.Bytes(), 0o644)
}
