// Package releasebuild makes a mcpseal release: what scripts/release runs.
//
// For each target it cross-compiles cmd/mcpseal with -trimpath, no cgo,
// -buildvcs=false and the release's version, commit and release key
// stamped in with -ldflags -X (package internal/version), then writes:
//
//	mcpseal_V_OS_ARCH.tar.gz (.zip for windows)  the binary and README.md
//	mcpseal_V_image_oci.tar                      the container image, an OCI layout (image.go)
//	mcpseal_V_image.index.json                   its image index: sha256 of this file is the image digest
//	mcpseal_V_sbom.cdx.json                      CycloneDX SBOM from the binaries' build information
//	mcpseal-V.tgz, mcpseal-OS-CPU-V.tgz          the npm launcher and platform packages (npm.go)
//	SHA256SUMS, SHA256SUMS.sig                   every artifact's digest, signed (package release)
//
// Everything is reproducible: the same commit, version and key give the
// same bytes (fixed times from the commit, fixed owners and order; see
// archive.go). Nothing is fetched but Go modules through the module proxy.
package releasebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/release"
)

// Target is one GOOS/GOARCH pair.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// AllTargets is every platform a release is built for.
var AllTargets = []Target{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ParseTarget reads "os/arch"; only AllTargets are accepted.
func ParseTarget(s string) (Target, error) {
	for _, t := range AllTargets {
		if t.String() == s {
			return t, nil
		}
	}
	return Target{}, fmt.Errorf("unknown target %q (one of darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64)", s)
}

func (t Target) exe() string {
	if t.OS == "windows" {
		return "mcpseal.exe"
	}
	return "mcpseal"
}

// Options says what to build.
type Options struct {
	// Repo is the module root to build from.
	Repo string
	// Version is the release version, plain semver without "v" ("0.3.0").
	Version string
	// Commit is the source commit (40 hex), stamped into the binaries.
	Commit string
	// Time is the release's fixed time for every archive member (the
	// commit's time).
	Time time.Time
	// Targets are the platforms to build (AllTargets for a release).
	Targets []Target
	// Signer signs SHA256SUMS; its public key is stamped into the binaries
	// as the release key verify-release pins.
	Signer ssh.Signer
	// Out is the folder the artifacts go to; it must be empty or absent.
	Out string
	// Log receives progress lines (stderr); nil for none.
	Log func(format string, args ...any)
}

var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]{1,32})?$`)

// ValidVersion reports whether v is a plain semver release version.
func ValidVersion(v string) bool { return semver.MatchString(v) }

// Build makes the release in o.Out and returns the artifact names.
func Build(ctx context.Context, o Options) ([]string, error) {
	if !ValidVersion(o.Version) {
		return nil, fmt.Errorf("version %q is not a plain semver version such as 0.3.0", o.Version)
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(o.Commit) {
		return nil, errors.New("the commit must be 40 lowercase hex digits")
	}
	if o.Signer == nil || o.Signer.PublicKey().Type() != ssh.KeyAlgoED25519 {
		return nil, errors.New("a release is signed with an Ed25519 key ('mcpseal key generate')")
	}
	if len(o.Targets) == 0 {
		return nil, errors.New("no targets")
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if err := emptyDir(o.Out); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "mcpseal-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	readme, err := os.ReadFile(filepath.Join(o.Repo, "README.md"))
	if err != nil {
		return nil, err
	}
	artifacts := map[string][]byte{}
	binaries := map[string]string{} // "os/arch" -> path
	linux := map[string][]byte{}    // arch -> bytes
	platform := map[Target][]byte{} // for npm
	for _, t := range o.Targets {
		bin, err := o.compile(ctx, t, work)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		binaries[t.String()] = bin
		platform[t] = data
		if t.OS == "linux" {
			linux[t.Arch] = data
		}
		files := []file{{name: t.exe(), mode: 0o755, data: data}, {name: "README.md", mode: 0o644, data: readme}}
		base := fmt.Sprintf("mcpseal_%s_%s_%s", o.Version, t.OS, t.Arch)
		if t.OS == "windows" {
			artifacts[base+".zip"], err = zipArchive(files, o.Time)
		} else {
			artifacts[base+".tar.gz"], err = tarGz(files, o.Time)
		}
		if err != nil {
			return nil, err
		}
	}
	if artifacts[fmt.Sprintf("mcpseal_%s_sbom.cdx.json", o.Version)], err = sbom(o.Version, binaries, o.Time); err != nil {
		return nil, err
	}
	if len(linux) > 0 {
		o.Log("image: linux/%s", strings.Join(slices.Sorted(maps.Keys(linux)), ", linux/"))
		tarb, index, err := image(o.Version, linux, o.Time)
		if err != nil {
			return nil, fmt.Errorf("container image: %w", err)
		}
		artifacts[fmt.Sprintf("mcpseal_%s_image_oci.tar", o.Version)] = tarb
		artifacts[fmt.Sprintf("mcpseal_%s_image.index.json", o.Version)] = index
	}
	o.Log("npm packages")
	pkgs, err := npmPackages(ctx, o.Version, platform, readme, filepath.Join(work, "npm"))
	if err != nil {
		return nil, fmt.Errorf("npm packages: %w", err)
	}
	maps.Copy(artifacts, pkgs)

	digests := map[string]string{}
	for name, data := range artifacts {
		d, err := release.Digest(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		digests[name] = d
	}
	sums, err := release.NewSums(digests)
	if err != nil {
		return nil, err
	}
	sumsText := sums.Marshal()
	sig, err := release.Sign(o.Signer, sumsText)
	if err != nil {
		return nil, err
	}
	artifacts["SHA256SUMS"], artifacts["SHA256SUMS.sig"] = sumsText, sig
	names := slices.Sorted(maps.Keys(artifacts))
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(o.Out, name), artifacts[name], 0o644); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ldflags stamps the release into internal/version.
func (o Options) ldflags() string {
	const pkg = "github.com/mcpseal/mcpseal/internal/version"
	key := strings.TrimPrefix(strings.TrimSpace(string(ssh.MarshalAuthorizedKey(o.Signer.PublicKey()))), ssh.KeyAlgoED25519+" ")
	return fmt.Sprintf("-s -w -buildid= -X %s.version=%s -X %s.commit=%s -X %s.releaseKey=%s", pkg, o.Version, pkg, o.Commit, pkg, key)
}

// compile builds cmd/mcpseal for t into work and returns its path. The
// environment is fixed so that the developer's own settings (GOFLAGS,
// GOAMD64, CGO_ENABLED, GOEXPERIMENT) cannot change the bytes.
func (o Options) compile(ctx context.Context, t Target, work string) (string, error) {
	out := filepath.Join(work, t.OS+"_"+t.Arch, t.exe())
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags="+o.ldflags(), "-o", out, "./cmd/mcpseal")
	cmd.Dir = o.Repo
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "GO") && !slices.Contains([]string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOSUMDB", "GOTOOLCHAIN"}, k) || k == "CGO_ENABLED"
	})
	cmd.Env = append(env, "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch, "GOFLAGS=-mod=readonly", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", t, err, b)
	}
	o.Log("built %s in %v", t, time.Since(start).Round(time.Millisecond))
	return out, nil
}

// emptyDir makes dir, or checks that it is an empty folder: a release is
// never written over another.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty: a release is never written over another", dir)
	}
	return nil
}
