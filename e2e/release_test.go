package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/internal/releasebuild"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/sshsig"
)

// The release tests build a real release with internal/releasebuild (what
// scripts/release runs) for this machine's platform, twice, and every
// artifact that build makes is checked here: the archive, the signed
// SHA256SUMS, the SBOM, the container image and the npm packages installed
// with no network. AllTargets builds the whole release once more, all six
// platforms, and checks its sums, signature and binaries (minutes of CPU
// on CI's two cores: docs/release.md gives the figures).

const releaseVersion = "0.3.0-test.1"

// releaseSet is one built release.
type releaseSet struct {
	dir    string
	target releasebuild.Target
	signer ssh.Signer
	pub    string // authorized_keys line of the release key
	opts   releasebuild.Options
	tool   string // the testrelease binary
	key    string // the signing key's file
}

func (r *releaseSet) path(name string) string { return filepath.Join(r.dir, name) }

func (r *releaseSet) archive() string {
	return r.path("mcpseal_" + releaseVersion + "_" + r.target.OS + "_" + r.target.Arch + ".tar.gz")
}

// buildRelease builds the release for this platform into a folder of t.
func buildRelease(t *testing.T) *releaseSet {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatalf("the release tests run on linux (the image and the npm tests run the linux binary)")
	}
	target, err := releasebuild.ParseTarget(runtime.GOOS + "/" + runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, err := lock.GenerateKey("release-test")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := lock.ParseSigningKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	commit := gitHead(t)
	r := &releaseSet{dir: filepath.Join(t.TempDir(), "dist"), target: target, signer: signer, pub: strings.TrimSpace(string(pub))}
	r.opts = releasebuild.Options{
		Repo: repoRoot, Version: releaseVersion, Commit: commit, Time: time.Unix(1796126239, 0),
		Targets: []releasebuild.Target{target}, Signer: signer, Out: r.dir,
	}
	tmp := t.TempDir()
	r.key = filepath.Join(tmp, "release-key")
	writeBytes(t, r.key, priv, 0o600)
	// releasebuild.Build runs in its own process, built without the race
	// detector: compressing the archives under -race takes minutes.
	r.tool = filepath.Join(tmp, "testrelease")
	cmd := exec.Command("go", "build", "-o", r.tool, "./internal/releasebuild/cmd/testrelease")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testrelease: %v\n%s", err, out)
	}
	r.build(t, r.dir)
	return r
}

// build makes the release into out and returns the names it wrote.
func (r *releaseSet) build(t *testing.T, out string) []string {
	t.Helper()
	start := time.Now()
	o := r.opts
	_, stderr, code := runIn(t, repoRoot, os.Environ(), 8*time.Minute, r.tool, "-repo", o.Repo, "-version", o.Version, "-commit", o.Commit,
		"-time", strconv.FormatInt(o.Time.Unix(), 10), "-targets", r.target.String(), "-key", r.key, "-out", out)
	if code != 0 {
		t.Fatalf("testrelease: exit %d\n%s", code, stderr)
	}
	t.Logf("release build: %v\n%s", time.Since(start).Round(time.Millisecond), stderr)
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func gitHead(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = repoRoot
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// runIn runs a command to completion in dir with env.
func runIn(t *testing.T, dir string, env []string, d time.Duration, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, ok := waitExit(cmd, d)
	if !ok {
		t.Fatalf("%s %s did not exit within %v\nstderr:\n%s", name, strings.Join(args, " "), d, errb.String())
	}
	return out.String(), errb.String(), code
}

// untarFile returns one member of a .tar.gz or .tar.
func untarFile(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(data)
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("no %s in the archive", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBytes(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// TestRelease builds one release and checks every artifact; each subtest
// named after an attack shows that attack refused.
func TestRelease(t *testing.T) {
	t.Parallel()
	r := buildRelease(t)

	t.Run("Reproducible", func(t *testing.T) {
		t.Parallel()
		again := filepath.Join(t.TempDir(), "again")
		names := r.build(t, again)
		for _, n := range names {
			if !bytes.Equal(readBytes(t, r.path(n)), readBytes(t, filepath.Join(again, n))) {
				t.Errorf("%s differs between two builds of the same commit", n)
			}
		}
		ents, _ := os.ReadDir(r.dir)
		if len(ents) != len(names) || len(names) < 8 {
			t.Errorf("first build wrote %d files, second %d", len(ents), len(names))
		}
	})

	// AllTargets: scripts/release's build for every platform a release
	// ships, cross-compiled, summed and signed, each archive holding a
	// binary of its platform's format and architecture. (Minutes of CPU
	// on a cold cache: the price of checking every artifact in CI.)
	t.Run("AllTargets", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "all")
		var names []string
		for _, tg := range releasebuild.AllTargets {
			names = append(names, tg.String())
		}
		o := r.opts
		_, stderr, code := runIn(t, repoRoot, os.Environ(), 20*time.Minute, r.tool, "-repo", o.Repo, "-version", o.Version, "-commit", o.Commit,
			"-time", strconv.FormatInt(o.Time.Unix(), 10), "-targets", strings.Join(names, ","), "-key", r.key, "-out", out)
		if code != 0 {
			t.Fatalf("testrelease, every target: exit %d\n%s", code, stderr)
		}
		vout, verr, vcode := mcpseal(t, home(t), "verify-release", filepath.Join(out, "SHA256SUMS"), filepath.Join(out, "SHA256SUMS.sig"), "--key", r.pub)
		if vcode != 0 {
			t.Fatalf("verify-release of the whole release: exit %d\n%s%s", vcode, vout, verr)
		}
		for _, tg := range releasebuild.AllTargets {
			base := "mcpseal_" + releaseVersion + "_" + tg.OS + "_" + tg.Arch
			var bin []byte
			if tg.OS == "windows" {
				bin = unzipFile(t, readBytes(t, filepath.Join(out, base+".zip")), "mcpseal.exe")
			} else {
				bin = untarFile(t, readBytes(t, filepath.Join(out, base+".tar.gz")), "mcpseal")
			}
			if err := checkBinary(bin, tg.OS, tg.Arch); err != nil {
				t.Errorf("%s: %v", tg, err)
			}
			if !bytes.Contains(readBytes(t, filepath.Join(out, "SHA256SUMS")), []byte(base)) {
				t.Errorf("%s: not in SHA256SUMS", tg)
			}
		}
	})

	t.Run("VersionStamped", func(t *testing.T) {
		t.Parallel()
		bin := filepath.Join(t.TempDir(), "mcpseal")
		writeBytes(t, bin, untarFile(t, readBytes(t, r.archive()), "mcpseal"), 0o755)
		out, stderr, code := runIn(t, "", environ(t, home(t)), 20*time.Second, bin, "version", "--json")
		wantExit(t, "version --json", code, 0)
		var v struct {
			Version int    `json:"version"`
			Release string `json:"mcpseal"`
			Commit  string `json:"commit"`
			OS      string `json:"os"`
			Modules []struct {
				Path, Version string
			} `json:"modules"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("version --json: %v\n%s%s", err, out, stderr)
		}
		if v.Version != 1 || v.Release != releaseVersion || v.Commit != r.opts.Commit || v.OS != "linux" || len(v.Modules) == 0 {
			t.Errorf("version --json = %+v", v)
		}
		out, _, code = runIn(t, "", environ(t, home(t)), 20*time.Second, bin, "version")
		if code != 0 || !strings.HasPrefix(out, "mcpseal "+releaseVersion+" (commit "+r.opts.Commit) || !strings.Contains(out, "github.com/spf13/cobra v1.10.2") {
			t.Errorf("version printed %q (exit %d)", out, code)
		}
		// The released binary pins the release key: no --key needed.
		out, stderr, code = runIn(t, "", environ(t, home(t)), 20*time.Second, bin, "verify-release", r.path("SHA256SUMS"), r.path("SHA256SUMS.sig"))
		if code != 0 || !strings.Contains(out, "ok       "+filepath.Base(r.archive())) {
			t.Errorf("the released binary's verify-release with its own pinned key: exit %d\n%s%s", code, out, stderr)
		}
	})

	t.Run("SBOM", func(t *testing.T) {
		t.Parallel()
		testSBOM(t, r)
	})
	t.Run("Signature", func(t *testing.T) {
		t.Parallel()
		testReleaseSignature(t, r)
	})
	t.Run("Image", func(t *testing.T) {
		t.Parallel()
		testReleaseImage(t, r)
	})
	t.Run("NPM", func(t *testing.T) {
		t.Parallel()
		testNPMPackages(t, r)
	})
	t.Run("NPXFromRegistry", func(t *testing.T) {
		t.Parallel()
		testNPXFromRegistry(t, r)
	})
}

func testSBOM(t *testing.T, r *releaseSet) {
	var doc struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Metadata    struct {
			Component struct{ Name, Version, PURL string }
		} `json:"metadata"`
		Components []struct {
			Type, Name, Version string
			PURL                string `json:"purl"`
		} `json:"components"`
	}
	dec := json.NewDecoder(bytes.NewReader(readBytes(t, r.path("mcpseal_"+releaseVersion+"_sbom.cdx.json"))))
	dec.DisallowUnknownFields()
	if err := json.Unmarshal(readBytes(t, r.path("mcpseal_"+releaseVersion+"_sbom.cdx.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != "1.5" || doc.Metadata.Component.Name != "mcpseal" || doc.Metadata.Component.Version != releaseVersion {
		t.Errorf("SBOM header = %+v", doc)
	}
	found := map[string]string{}
	for _, c := range doc.Components {
		if c.Type != "library" || !strings.HasPrefix(c.PURL, "pkg:golang/"+c.Name+"@") {
			t.Errorf("component %+v", c)
		}
		found[c.Name] = c.Version
	}
	// The modules go version -m reports for the released binary.
	bin := filepath.Join(t.TempDir(), "mcpseal")
	writeBytes(t, bin, untarFile(t, readBytes(t, r.archive()), "mcpseal"), 0o755)
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "dep" {
			n++
			if found[f[1]] != f[2] {
				t.Errorf("go version -m lists %s %s; the SBOM has %q", f[1], f[2], found[f[1]])
			}
		}
	}
	if n == 0 || n != len(doc.Components) {
		t.Errorf("go version -m lists %d modules, the SBOM %d", n, len(doc.Components))
	}
}

func testReleaseSignature(t *testing.T, r *releaseSet) {
	dir := t.TempDir()
	for _, n := range []string{"SHA256SUMS", "SHA256SUMS.sig", filepath.Base(r.archive())} {
		writeBytes(t, filepath.Join(dir, n), readBytes(t, r.path(n)), 0o644)
	}
	sums, sig := filepath.Join(dir, "SHA256SUMS"), filepath.Join(dir, "SHA256SUMS.sig")
	h := home(t)
	verify := func(t *testing.T, extra ...string) (string, int) {
		t.Helper()
		out, stderr, code := mcpseal(t, h, append([]string{"verify-release", sums, sig}, extra...)...)
		return out + stderr, code
	}
	t.Run("Good", func(t *testing.T) {
		out, code := verify(t, "--key", r.pub)
		if code != 0 || !strings.Contains(out, "signature: good") || !strings.Contains(out, "verified 1 artifact(s)") {
			t.Errorf("exit %d\n%s", code, out)
		}
		// A key is never taken from the download: this build pins none.
		out, code = verify(t)
		if code == 0 || !strings.Contains(out, "pins no release key") {
			t.Errorf("without a pinned key: exit %d\n%s", code, out)
		}
		// --all: the other artifacts were not downloaded.
		if out, code := verify(t, "--key", r.pub, "--all"); code == 0 || !strings.Contains(out, "MISSING") {
			t.Errorf("--all with missing artifacts: exit %d\n%s", code, out)
		}
	})
	t.Run("SSHKeygen", func(t *testing.T) {
		keygen, err := exec.LookPath("ssh-keygen")
		if err != nil {
			t.Fatal("ssh-keygen is not on PATH (openssh-client)")
		}
		allowed := filepath.Join(t.TempDir(), "allowed_signers")
		writeBytes(t, allowed, []byte("release "+r.pub+"\n"), 0o644)
		cmd := exec.Command(keygen, "-Y", "verify", "-f", allowed, "-I", "release", "-n", "mcpseal-release", "-s", sig)
		cmd.Stdin = bytes.NewReader(readBytes(t, sums))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("ssh-keygen -Y verify: %v\n%s", err, out)
		}
		cmd = exec.Command("sha256sum", "-c", "--ignore-missing", "--strict", "SHA256SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), filepath.Base(r.archive())+": OK") {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	})
	t.Run("TamperedArchive", func(t *testing.T) {
		d := t.TempDir()
		for _, n := range []string{"SHA256SUMS", "SHA256SUMS.sig"} {
			writeBytes(t, filepath.Join(d, n), readBytes(t, filepath.Join(dir, n)), 0o644)
		}
		a := readBytes(t, r.archive())
		a[len(a)/2] ^= 1
		writeBytes(t, filepath.Join(d, filepath.Base(r.archive())), a, 0o644)
		out, stderr, code := mcpseal(t, h, "verify-release", filepath.Join(d, "SHA256SUMS"), filepath.Join(d, "SHA256SUMS.sig"), "--key", r.pub)
		if code != 1 || !strings.Contains(out, "MISMATCH "+filepath.Base(r.archive())) || !strings.Contains(stderr, "do not use them") {
			t.Errorf("exit %d\n%s%s", code, out, stderr)
		}
	})
	t.Run("TamperedSums", func(t *testing.T) {
		d := t.TempDir()
		writeBytes(t, filepath.Join(d, "SHA256SUMS.sig"), readBytes(t, sig), 0o644)
		a := readBytes(t, r.archive())
		a[len(a)/2] ^= 1
		writeBytes(t, filepath.Join(d, filepath.Base(r.archive())), a, 0o644)
		// The attacker lists the altered archive's digest.
		got, _ := exec.Command("sha256sum", filepath.Join(d, filepath.Base(r.archive()))).Output()
		lines := strings.Split(string(readBytes(t, sums)), "\n")
		for i, l := range lines {
			if strings.HasSuffix(l, "  "+filepath.Base(r.archive())) {
				lines[i] = strings.Fields(string(got))[0] + "  " + filepath.Base(r.archive())
			}
		}
		writeBytes(t, filepath.Join(d, "SHA256SUMS"), []byte(strings.Join(lines, "\n")), 0o644)
		out, stderr, code := mcpseal(t, h, "verify-release", filepath.Join(d, "SHA256SUMS"), filepath.Join(d, "SHA256SUMS.sig"), "--key", r.pub)
		if code != 1 || !strings.Contains(stderr, "not a valid signature") || strings.Contains(out, "ok ") {
			t.Errorf("exit %d\n%s%s", code, out, stderr)
		}
	})
	t.Run("WrongKey", func(t *testing.T) {
		_, other, err := lock.GenerateKey("attacker")
		if err != nil {
			t.Fatal(err)
		}
		out, stderr, code := mcpseal(t, h, "verify-release", sums, sig, "--key", strings.TrimSpace(string(other)))
		if code != 1 || !strings.Contains(stderr, "not a pinned release key") || strings.Contains(out, "ok ") {
			t.Errorf("exit %d\n%s%s", code, out, stderr)
		}
	})
	t.Run("LockSignatureReplayedAsRelease", func(t *testing.T) {
		// A signature the release key made for another namespace (a lock
		// manifest) never passes as a release's.
		other, err := sshsig.Sign(r.signer, lock.SignatureNamespace, readBytes(t, sums))
		if err != nil {
			t.Fatal(err)
		}
		forged := filepath.Join(t.TempDir(), "SHA256SUMS.sig")
		writeBytes(t, forged, []byte(other), 0o644)
		_, stderr, code := mcpseal(t, h, "verify-release", sums, forged, "--key", r.pub)
		if code != 1 || !strings.Contains(stderr, "not a valid signature") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	})
}

func testReleaseImage(t *testing.T, r *releaseSet) {
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(readBytes(t, r.path("mcpseal_"+releaseVersion+"_image_oci.tar"))))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("layout member %q escapes the folder", h.Name)
		}
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		writeBytes(t, p, b, 0o644)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	om, err := outer.IndexManifest()
	if err != nil || len(om.Manifests) != 1 {
		t.Fatalf("layout index: %v, %+v", err, om)
	}
	// SHA256SUMS records the image's digest: that of the index artifact.
	if want := "sha256:" + sha256hex(readBytes(t, r.path("mcpseal_"+releaseVersion+"_image.index.json"))); om.Manifests[0].Digest.String() != want {
		t.Errorf("the layout's image is %s; the index artifact's digest is %s", om.Manifests[0].Digest, want)
	}
	ii, err := outer.ImageIndex(om.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var img v1.Image
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			if img, err = ii.Image(d.Digest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if img == nil {
		t.Fatalf("no linux/%s image in the index", runtime.GOARCH)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/mcpseal" {
		t.Errorf("image config: user %q, entrypoint %v", cfg.Config.User, cfg.Config.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	fs := map[string]*tar.Header{}
	var binary []byte
	lr := tar.NewReader(rc)
	for {
		h, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fs[strings.TrimSuffix(h.Name, "/")] = h
		if h.Name == "mcpseal" {
			if binary, err = io.ReadAll(lr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if h := fs["mcpseal"]; h == nil || h.Uid != 0 || h.Mode&0o022 != 0 {
		t.Errorf("/mcpseal must be root-owned and not writable by the image's user: %+v", h)
	}
	if h := fs["home/nonroot"]; h == nil || h.Uid != 65532 {
		t.Errorf("the non-root user's home: %+v", h)
	}
	// The binary from the layer runs, as the image would run it.
	bin := filepath.Join(t.TempDir(), "mcpseal")
	writeBytes(t, bin, binary, 0o755)
	out, stderr, code := runIn(t, "", environ(t, home(t)), 20*time.Second, bin, "version")
	if code != 0 || !strings.HasPrefix(out, "mcpseal "+releaseVersion+" ") {
		t.Errorf("the image's binary: exit %d\n%s%s", code, out, stderr)
	}
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// npmEnv is an environment with a fresh HOME and npm cache and no usable
// registry: whatever npm or npx would fetch fails.
func npmEnv(t *testing.T, h string) []string {
	home := t.TempDir()
	return environ(t, h, "HOME="+home, "npm_config_cache="+filepath.Join(home, "npm-cache"), "npm_config_userconfig="+filepath.Join(home, ".npmrc"),
		"npm_config_offline=true", "npm_config_registry=http://127.0.0.1:9/", "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
}

// testNPMPackages packs nothing itself: scripts/release ran `npm pack` for
// every package. The tarballs are installed into a fresh prefix with
// `npm install --offline`, then `npx mcpseal` runs the demo and guards
// server-memory for the TypeScript SDK client; a tampered or swapped
// platform binary is refused by the launcher.
func testNPMPackages(t *testing.T, r *releaseSet) {
	needNode(t)
	launcherTgz := r.path("mcpseal-" + releaseVersion + ".tgz")
	platformTgz := r.path("mcpseal-" + strings.TrimPrefix(r.target.NPMPackage(), "@mcpseal/") + "-" + releaseVersion + ".tgz")
	for _, tgz := range []string{launcherTgz, platformTgz} {
		pj := untarFile(t, readBytes(t, tgz), "package/package.json")
		var p struct {
			Name                 string            `json:"name"`
			Version              string            `json:"version"`
			Scripts              map[string]string `json:"scripts"`
			OptionalDependencies map[string]string `json:"optionalDependencies"`
		}
		if err := json.Unmarshal(pj, &p); err != nil {
			t.Fatal(err)
		}
		if p.Version != releaseVersion || len(p.Scripts) != 0 {
			t.Errorf("%s: version %q, scripts %v (no package may have install scripts)", p.Name, p.Version, p.Scripts)
		}
		if p.Name == "mcpseal" && p.OptionalDependencies[r.target.NPMPackage()] != releaseVersion {
			t.Errorf("the launcher's optional dependencies %v lack %s@%s", p.OptionalDependencies, r.target.NPMPackage(), releaseVersion)
		}
	}

	prefix := filepath.Join(t.TempDir(), "project")
	if err := os.Mkdir(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	h := home(t)
	env := npmEnv(t, h)
	start := time.Now()
	out, stderr, code := runIn(t, prefix, env, 120*time.Second, "npm", "install", "--offline", "--no-audit", "--no-fund", launcherTgz, platformTgz)
	if code != 0 {
		t.Fatalf("npm install --offline: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("npm install --offline: %v", time.Since(start).Round(time.Millisecond))

	out, stderr, code = runIn(t, prefix, env, 60*time.Second, "npx", "--offline", "mcpseal", "demo")
	if code != 0 || !strings.Contains(out, "CONTRACT CHANGED") || !strings.Contains(out, "pinned the contract") {
		t.Fatalf("npx mcpseal demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}

	// The TypeScript SDK client runs server-memory behind `npx mcpseal run`,
	// twice: the first session pins, the second verifies.
	memEnv := append(env, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	argv := append([]string{"npx", "--offline", "--prefix", prefix, "mcpseal", "run", "--name", "memory", "--"}, referenceServer("server-memory")...)
	// npx starts npm before the launcher: on a loaded 2-core machine the
	// first connect can take longer than the client's default 20 s.
	for i, flags := range [][]string{{"--call", "read_graph", "--timeout", "50000"}, {"--timeout", "50000"}} {
		sum, stderr := tsSession(t, memEnv, flags, argv...)
		sum.wantOK(t, "npx session "+jsonInt(i+1), stderr)
		if !strings.Contains(strings.Join(sum.Tools, " "), "read_graph") {
			t.Errorf("session %d: tools %v", i+1, sum.Tools)
		}
		if i == 0 && !strings.Contains(stderr, "pinned") {
			t.Errorf("the first session did not pin:\n%s", stderr)
		}
	}

	// Attacks on the installed packages.
	binPath := filepath.Join(prefix, "node_modules", filepath.FromSlash(r.target.NPMPackage()), "bin", "mcpseal")
	good := readBytes(t, binPath)
	t.Run("TamperedPlatformBinary", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[len(bad)/2] ^= 1
		writeBytes(t, binPath, bad, 0o755)
		defer writeBytes(t, binPath, good, 0o755)
		out, stderr, code := runIn(t, prefix, env, 60*time.Second, "npx", "--offline", "mcpseal", "version")
		if code != 7 || out != "" || !strings.Contains(stderr, "does not match the SHA-256 recorded in mcpseal "+releaseVersion) {
			t.Errorf("tampered binary: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
		}
	})
	t.Run("SwappedPlatformPackage", func(t *testing.T) {
		// Another release's platform package (its own version, its own
		// binary) in place of this one's.
		pjPath := filepath.Join(filepath.Dir(filepath.Dir(binPath)), "package.json")
		pj := readBytes(t, pjPath)
		writeBytes(t, pjPath, bytes.Replace(pj, []byte(`"version": "`+releaseVersion+`"`), []byte(`"version": "0.2.9"`), 1), 0o644)
		defer writeBytes(t, pjPath, pj, 0o644)
		out, stderr, code := runIn(t, prefix, env, 60*time.Second, "npx", "--offline", "mcpseal", "version")
		if code != 7 || out != "" || !strings.Contains(stderr, "is not version "+releaseVersion) {
			t.Errorf("swapped package: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
		}
	})
}

// unzipFile returns the named file of a zip archive.
func unzipFile(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("%s not in the zip archive", name)
	return nil
}

// checkBinary checks that bin is an executable of goos and goarch.
func checkBinary(bin []byte, goos, goarch string) error {
	machines := map[string][3]any{ // ELF, Mach-O, PE machine numbers
		"amd64": {elf.EM_X86_64, macho.CpuAmd64, uint16(pe.IMAGE_FILE_MACHINE_AMD64)},
		"arm64": {elf.EM_AARCH64, macho.CpuArm64, uint16(pe.IMAGE_FILE_MACHINE_ARM64)},
	}
	m := machines[goarch]
	r := bytes.NewReader(bin)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		if f.Machine != m[0].(elf.Machine) {
			return fmt.Errorf("ELF machine %v", f.Machine)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return err
		}
		if f.Cpu != m[1].(macho.Cpu) {
			return fmt.Errorf("Mach-O CPU %v", f.Cpu)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return err
		}
		if f.Machine != m[2].(uint16) {
			return fmt.Errorf("PE machine %#x", f.Machine)
		}
	default:
		return fmt.Errorf("no check for %s", goos)
	}
	return nil
}
