package crawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/tlog"
)

// An outcome is one probe's result.
type outcome struct {
	t       Target
	at      time.Time
	version string
	pkg     *tlog.Package
	res     *ProbeResult
	reason  string // failure code; "" on success
	skipped bool   // ctx ended before the probe started
}

// probeTarget installs (registry packages), starts and probes one server.
func probeTarget(ctx context.Context, cfg *Config, npm *npmClient, t Target) outcome {
	o := outcome{t: t, at: cfg.Now().UTC()}
	if ctx.Err() != nil {
		o.skipped = true
		return o
	}
	var cmd Command
	if t.Local() {
		cmd = Command{Argv: t.Argv, Dir: t.Dir}
	} else {
		rel, err := npm.resolve(ctx, t.Package, t.Version)
		if err != nil {
			o.reason = failureCode(err, "registry-error")
			return o
		}
		o.version = rel.Version
		dir, err := install(ctx, cfg, npm, rel)
		if err != nil {
			o.reason = failureCode(err, "install-failed")
			return o
		}
		entry, _, err := entryPoint(dir)
		if err != nil {
			o.reason = failureCode(err, "bad-package")
			return o
		}
		o.pkg = &tlog.Package{Name: rel.Name, Version: rel.Version, Integrity: rel.Integrity}
		cmd = Command{Argv: []string{"node", entry}, Dir: dir}
	}
	home, err := os.MkdirTemp(cfg.CacheDir, "home-")
	if err != nil {
		o.reason = "probe-failed"
		return o
	}
	defer os.RemoveAll(home)
	os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	cmd.Env = probeEnv(home)
	pctx, cancel := context.WithTimeout(ctx, cfg.ProbeTimeout)
	defer cancel()
	proc, err := cfg.Launcher.Start(pctx, cmd)
	if err != nil {
		o.reason = "start-failed"
		return o
	}
	res, err := Probe(pctx, proc)
	proc.Stop()
	if err != nil {
		o.reason = classify(err, proc.StderrTail())
		return o
	}
	o.res = res
	return o
}

// failureCode keeps the error's text when it is one of this package's
// codes, else gives fallback.
func failureCode(err error, fallback string) string {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || c == '-') {
			return fallback
		}
	}
	return s
}

// install unpacks a release into the cache (once per version) and, when
// it has dependencies, installs them with scripts disabled.
func install(ctx context.Context, cfg *Config, npm *npmClient, rel *release) (string, error) {
	dir := filepath.Join(cfg.CacheDir, "npm", strings.NewReplacer("/", "+", "@", "").Replace(rel.Name)+"@"+rel.Version)
	done := filepath.Join(dir, ".mcpseal-installed")
	if _, err := os.Stat(done); err == nil {
		return filepath.Join(dir, "package"), nil
	}
	os.RemoveAll(dir)
	tgz, err := npm.download(ctx, rel)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pkgDir := filepath.Join(dir, "package")
	if err := unpack(tgz, pkgDir); err != nil {
		return "", err
	}
	_, pi, err := entryPoint(pkgDir)
	if err == nil && len(pi.Dependencies) > 0 {
		if cfg.Deps == nil {
			return "", errors.New("needs-dependencies")
		}
		if err := cfg.Deps.Install(ctx, pkgDir, cfg.Registry); err != nil {
			return "", errors.New("dependencies-failed")
		}
	}
	return pkgDir, os.WriteFile(done, nil, 0o644)
}

// A DepInstaller installs a package's dependencies into its folder
// without running any install script.
type DepInstaller interface {
	Install(ctx context.Context, dir, registry string) error
}

// NPMInstaller runs `npm install --ignore-scripts` (no lifecycle script
// of the package or of any dependency runs) against the crawler's
// registry, with a throwaway home and bounded time.
type NPMInstaller struct {
	// CacheDir holds npm's download cache.
	CacheDir string
	Timeout  time.Duration
}

// npmInstallTimeout bounds one dependency install.
const npmInstallTimeout = 3 * time.Minute

func (n NPMInstaller) Install(ctx context.Context, dir, registry string) error {
	t := n.Timeout
	if t <= 0 {
		t = npmInstallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	var rnd [6]byte
	rand.Read(rnd[:])
	home := filepath.Join(n.CacheDir, "npm-home-"+hex.EncodeToString(rnd[:]))
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, "npm", "install", "--ignore-scripts", "--omit=dev", "--omit=optional",
		"--no-audit", "--no-fund", "--no-package-lock", "--no-save", "--registry", registry)
	cmd.Dir = dir
	cmd.Env = append(probeEnv(home), "npm_config_cache="+filepath.Join(n.CacheDir, "npm-cache"),
		"npm_config_ignore_scripts=true", "npm_config_update_notifier=false", "npm_config_user_agent="+UserAgent)
	return cmd.Run()
}

// recorder turns outcomes into log entries and liveness, one at a time.
type recorder struct {
	cfg  *Config
	v    *tlog.Verified
	live *tlog.Liveness
	sum  *Summary
}

func (r *recorder) record(o outcome) error {
	r.sum.Probed++
	l := r.live.Servers[o.t.ID]
	if l == nil {
		l = &tlog.ServerLiveness{}
		r.live.Servers[o.t.ID] = l
	}
	prevSeen := time.Time{}
	if l.Seen != nil {
		prevSeen = *l.Seen
	}
	l.Checked, l.Version, l.Failure = o.at, o.version, ""
	if o.res == nil {
		l.Failure = o.reason
		r.sum.Failures[o.reason]++
		return tlog.WriteLiveness(r.cfg.Log, r.live)
	}
	for _, defs := range o.res.Contract.Defs {
		for _, d := range defs {
			if len(d.Canonical) > tlog.MaxBlobSize {
				l.Failure = "definition-too-large"
				r.sum.Failures[l.Failure]++
				return tlog.WriteLiveness(r.cfg.Log, r.live)
			}
		}
	}
	obs := tlog.Observation{Server: o.t.ID, Package: o.pkg, Observed: o.at, Protocol: o.res.Protocol, Contract: o.res.Contract}
	if !validProtocolDate(obs.Protocol) {
		obs.Protocol = probeProtocol
	}
	e, err := r.v.EntryAfter(obs, prevSeen)
	if err != nil {
		l.Failure = "entry-too-large"
		if errors.Is(err, tlog.ErrMalformedEntry) && strings.Contains(err.Error(), "twice") {
			l.Failure = "duplicate-name"
		}
		r.sum.Failures[l.Failure]++
		return tlog.WriteLiveness(r.cfg.Log, r.live)
	}
	if e != nil {
		raw, err := e.Marshal()
		if err != nil {
			return err
		}
		if err := tlog.PutContract(r.cfg.Log, o.res.Contract); err != nil {
			return err
		}
		if _, err := r.cfg.Writer.Append([][]byte{raw}); err != nil {
			return err
		}
		if r.v.Latest(o.t.ID) == nil {
			r.sum.New++
		} else {
			r.sum.Changed++
		}
	} else {
		r.sum.Unchanged++
	}
	seen := o.at
	l.Seen = &seen
	return tlog.WriteLiveness(r.cfg.Log, r.live)
}

func validProtocolDate(p string) bool {
	t, err := time.Parse("2006-01-02", p)
	return err == nil && t.Format("2006-01-02") == p
}
