package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// maxPackageJSON bounds a package.json read to find a package's binary.
const maxPackageJSON = 1 << 20

// npx resolves `npx [options] PKG[@VERSION] [ARGS...]` (and --package) to
// the package npx already installed in its cache: node, the package's
// binary script, and the cache folder's node_modules as the tree. Nothing
// is downloaded; a package that is not installed is an error.
func (r *resolver) npx(argv []string) (*resolved, error) {
	spec, bin, rest, err := parseNPX(argv[1:])
	if err != nil {
		return nil, err
	}
	name, version := splitNPMSpec(spec)
	cache := r.getenv("npm_config_cache")
	if cache == "" {
		home := r.getenv("HOME")
		if home == "" {
			return nil, fmt.Errorf("cannot find npm's cache: HOME is not set")
		}
		cache = filepath.Join(home, ".npm")
	}
	installs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", filepath.FromSlash(name), "package.json"))
	var best string
	var bestTime time.Time
	var pkg npmPackage
	found := 0
	for _, pj := range installs {
		p, err := readPackageJSON(pj)
		if err != nil || p.Name != name || version != "" && p.Version != version {
			continue
		}
		found++
		if fi, err := os.Stat(pj); err == nil && fi.ModTime().After(bestTime) {
			best, bestTime, pkg = pj, fi.ModTime(), p
		}
	}
	if best == "" {
		return nil, fmt.Errorf("%s is not installed in npx's cache (%s); run it once with npx so that npx installs it, then create the profile", spec, filepath.Join(cache, "_npx"))
	}
	if found > 1 {
		r.note("npx's cache holds %d installs of %s; the newest (%s) was chosen", found, name, pkg.Version)
	}
	pkgDir := filepath.Dir(best)
	script, err := pkg.binScript(name, bin)
	if err != nil {
		return nil, err
	}
	r.note("npx %s is %s %s, installed in %s", spec, name, pkg.Version, pkgDir)
	res, err := r.program(filepath.Join(pkgDir, filepath.FromSlash(script)), append([]string{script}, rest...))
	if err != nil {
		return nil, err
	}
	// The tree is the cache folder's node_modules: the package and every
	// dependency npm installed beside it.
	res.tree = filepath.Dir(filepath.Dir(best))
	if strings.HasPrefix(name, "@") {
		res.tree = filepath.Dir(res.tree)
	}
	return res, nil
}

// parseNPX reads npx's options and returns the package spec, the binary
// named with --package (or ""), and the arguments for the binary.
func parseNPX(args []string) (spec, bin string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet" || a == "--prefer-offline" || a == "--no-install":
		case a == "-p" || a == "--package":
			if i+1 >= len(args) {
				return "", "", nil, fmt.Errorf("npx %s needs a package", a)
			}
			i++
			spec = args[i]
		case strings.HasPrefix(a, "--package="):
			spec = strings.TrimPrefix(a, "--package=")
		case a == "--":
			continue
		case strings.HasPrefix(a, "-"):
			return "", "", nil, fmt.Errorf("npx option %s is not understood; write the command without it", a)
		default:
			if spec == "" {
				return a, "", args[i+1:], nil
			}
			return spec, a, args[i+1:], nil
		}
	}
	return "", "", nil, fmt.Errorf("npx without a package")
}

// splitNPMSpec splits "@scope/name@1.2.3" into name and exact version.
func splitNPMSpec(spec string) (name, version string) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return spec, ""
	}
	return spec[:at], spec[at+1:]
}

type npmPackage struct {
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Bin     json.RawMessage `json:"bin"`
}

func readPackageJSON(path string) (npmPackage, error) {
	var p npmPackage
	// Follow: package managers (pnpm) link packages into place.
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return p, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSON))
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(data, &p)
}

// binScript is the package's script for bin ("" for its only, or its
// own-named, binary).
func (p npmPackage) binScript(name, bin string) (string, error) {
	var one string
	if json.Unmarshal(p.Bin, &one) == nil && one != "" && bin == "" {
		return filepath.Clean(one), nil
	}
	var bins map[string]string
	if json.Unmarshal(p.Bin, &bins) != nil || len(bins) == 0 {
		return "", fmt.Errorf("%s declares no binary", name)
	}
	if bin == "" && len(bins) == 1 {
		for _, s := range bins {
			return filepath.Clean(s), nil
		}
	}
	if bin == "" {
		bin = name[strings.LastIndex(name, "/")+1:]
	}
	s, ok := bins[bin]
	if !ok {
		return "", fmt.Errorf("%s has no binary named %s", name, bin)
	}
	return filepath.Clean(s), nil
}

// uvx resolves `uvx [--from PKG] TOOL [ARGS...]` to the environment uv
// already built for it in its cache: the environment's Python (by its real
// path), the tool's entry script, and the environment as the tree.
func (r *resolver) uvx(argv []string) (*resolved, error) {
	args := argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "--from" && len(args) > 1 {
			args = args[2:]
			continue
		}
		return nil, fmt.Errorf("uvx option %s is not understood; write the command without it", args[0])
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("uvx without a tool")
	}
	tool, _, _ := strings.Cut(args[0], "@")
	cache := r.getenv("UV_CACHE_DIR")
	if cache == "" {
		base := r.getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(r.getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "uv")
	}
	scripts, _ := filepath.Glob(filepath.Join(cache, "archive-v0", "*", "bin", tool))
	var best string
	var bestTime time.Time
	for _, s := range scripts {
		if fi, err := os.Stat(s); err == nil && fi.ModTime().After(bestTime) {
			best, bestTime = s, fi.ModTime()
		}
	}
	if best == "" {
		return nil, fmt.Errorf("%s is not installed in uv's cache (%s); run it once with uvx so that uv installs it, then create the profile", tool, filepath.Join(cache, "archive-v0"))
	}
	if len(scripts) > 1 {
		r.note("uv's cache holds %d environments with %s; the newest was chosen", len(scripts), tool)
	}
	res, err := r.program(best, append([]string{best}, args[1:]...))
	if err != nil {
		return nil, err
	}
	res.tree = filepath.Dir(filepath.Dir(best))
	return res, nil
}
