package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/lock/survey"
	"github.com/mcpseal/mcpseal/pkgpin"
	"github.com/mcpseal/mcpseal/probe"
)

// This file holds the lock commands: lock (write), lock --check, lock
// diff, lock approve, lock revoke and lock verify. lock sign and key
// generate are in key.go. The logic lives in package lock (the format),
// lock/survey (config, registry, probe), pkgpin and probe.

func init() { register(newLockCmd) }

type lockFlags struct {
	config, out     string
	check, approve  bool
	yes, asJSON     bool
	by, via, ref    string
	definitionsOnly bool
	npm, pypi       string
	probeTimeout    time.Duration
	hostConfig      string
}

func newLockCmd(e *env) *cobra.Command {
	var f lockFlags
	cmd := &cobra.Command{
		Use:   "lock [--config FILE] [--out FILE] [--approve [--yes]] | lock --check",
		Short: "Lock the project's servers: approved contracts and packages, in the repository",
		Long: `Lock reads the project's MCP config (./.mcp.json; VS Code's servers shape
and settings files too), starts every local server, reads everything it shows
the model — every page of tools, prompts, resources and resource templates,
and its instructions — without calling any tool, stops it, and writes
mcpseal.lock: each server's command, its package pin and every definition in
full with its digest. Commit it; review changes to it like a dependency
update.

A server launched from a registry (npx, npm exec, pnpm dlx, yarn dlx, bunx,
uvx, uv tool run, pipx run, docker/podman run image@sha256:...) is pinned to
an exact version: a tag or "latest" is resolved now, and that exact version
is probed and recorded with the registry's digest. 'mcpseal run --lock' then
runs exactly that version.

New and changed definitions are recorded as pending: the gate withholds them
from the model until they are approved. --approve shows them and approves
them all (it asks on a terminal; --yes skips the question). Approvals of
unchanged definitions carry over.

--check is for CI: it changes nothing and exits 1, with labels, when a
definition changed, a server was added or removed, a command changed, the
registry now serves other contents for a locked version, the lock pins no
package for a registry launch, or a server fails to start. A newer release
that the lock holds back is only a note.

${VAR}, ${VAR:-default} and ${env:VAR} in the config are filled in from the
environment as clients do; a server that needs credentials to list its tools
needs them here too, and in CI.

Registries: --npm-registry (or $` + pkgpin.NPMRegistryEnv + `, default ` + pkgpin.DefaultNPMRegistry + `)
and --pypi-url (or $` + pkgpin.PyPIURLEnv + `, default ` + pkgpin.DefaultPyPIURL + `, a PyPI JSON API).`,
		Example: `  mcpseal lock --approve
  mcpseal lock --check
  mcpseal lock diff files
  mcpseal lock approve files read_file --digest sha256:...`,
		Args: exactArgs(0, "no arguments (subcommands: diff, approve, revoke, verify, sign)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.check {
				if f.approve {
					return &usageError{errors.New("--check changes nothing; it cannot --approve")}
				}
				return runLockCheck(e, f)
			}
			return runLock(e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", ".mcp.json", "the MCP config `FILE` to read")
	fl.StringVar(&f.out, "out", lock.FileName, "the lock `FILE` to write (with --check: to compare with)")
	fl.BoolVar(&f.check, "check", false, "compare the servers with the lock and exit 1 on any difference (for CI)")
	fl.BoolVar(&f.approve, "approve", false, "approve every pending definition, after showing it")
	fl.BoolVarP(&f.yes, "yes", "y", false, "with --approve: approve without asking")
	fl.BoolVar(&f.asJSON, "json", false, "with --check: print the findings as JSON")
	addApprovalFlags(fl, &f.by, &f.via, &f.ref)
	fl.BoolVar(&f.definitionsOnly, "definitions-only", false, "lock a registry launch that cannot be pinned by its definitions alone")
	fl.StringVar(&f.npm, "npm-registry", "", "npm registry base `URL`")
	fl.StringVar(&f.pypi, "pypi-url", "", "PyPI JSON API base `URL`")
	fl.DurationVar(&f.probeTimeout, "probe-timeout", probe.DefaultTimeout, "how long each server may take to start and list its contract")
	fl.StringVar(&f.hostConfig, "host-config", "", "with --check: also check the signed manifest against this host config `FILE` (or $"+lock.HostConfigEnv+")")
	for _, sub := range []func(*env) *cobra.Command{newLockDiffCmd, newLockApproveCmd, newLockRevokeCmd, newLockVerifyCmd, newLockSignCmd} {
		cmd.AddCommand(sub(e))
	}
	return cmd
}

type flagSet interface {
	StringVar(p *string, name, value, usage string)
}

func addApprovalFlags(fl flagSet, by, via, ref *string) {
	fl.StringVar(by, "by", "", "who approves, recorded as typed and never verified (e.g. github:handle)")
	fl.StringVar(via, "via", "cli", "how it was approved: a lowercase word such as cli or pr")
	fl.StringVar(ref, "ref", "", "a reference recorded with the approval (e.g. pr-12)")
}

func (f *lockFlags) survey(e *env) (*survey.Survey, error) {
	reg := pkgpin.RegistryFromEnv(e.getenv)
	if f.npm != "" {
		reg.NPM = f.npm
	}
	if f.pypi != "" {
		reg.PyPI = f.pypi
	}
	for _, u := range []string{reg.NPM, reg.PyPI} {
		if u == "" {
			continue
		}
		if err := pkgpin.CheckBaseURL(u); err != nil {
			return nil, &usageError{err}
		}
	}
	return &survey.Survey{ConfigPath: f.config, Registry: reg, ProbeTimeout: f.probeTimeout, DefinitionsOnly: f.definitionsOnly}, nil
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// readOldLock reads the lock about to be rewritten: none is fine, a
// damaged one is not (its approvals would be lost silently).
func readOldLock(path string) (*lock.Lock, error) {
	l, _, err := lock.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, withHint(err, "run 'mcpseal lock verify --lock %s' to see every fault; move the file away to start over", path)
	}
	return l, nil
}

func runLock(e *env, f lockFlags) error {
	approval, err := newApproval(f.by, f.via, f.ref, "")
	if err != nil {
		return &usageError{err}
	}
	s, err := f.survey(e)
	if err != nil {
		return err
	}
	old, err := readOldLock(f.out)
	if err != nil {
		return err
	}
	targets, err := s.Targets()
	if err != nil {
		return withHint(err, "--config names another config file")
	}
	ctx, cancel := signalContext()
	defer cancel()
	next := lock.New()
	var failed []string
	for i := range targets {
		t := &targets[i]
		if t.Remote {
			fmt.Fprintf(e.stderr, "mcpseal: %s: skipped: a remote server (this release locks local servers)\n", t.Name)
			continue
		}
		fmt.Fprintf(e.stderr, "mcpseal: %s: probing\n", t.Name)
		obs, err := s.Observe(ctx, t)
		if err == nil {
			var prev *lock.Entry
			if old != nil {
				prev, _ = old.Entry(t.Name)
			}
			var entry *lock.Entry
			if entry, err = lock.NewEntry(obs, prev); err == nil {
				next.Set(t.Name, entry)
				reportEntry(e.stdout, t.Name, entry, prev)
				continue
			}
		}
		failed = append(failed, t.Name)
		reportFailure(e.stderr, t.Name, err)
	}
	if len(failed) > 0 {
		return exitWith(ExitFailure, fmt.Errorf("%d server(s) could not be locked (%s); %s was not changed", len(failed), strings.Join(failed, ", "), f.out))
	}
	if old != nil {
		for _, name := range old.Names() {
			if _, ok := next.Entry(name); !ok {
				fmt.Fprintf(e.stdout, "%s: removed (no longer in %s)\n", name, f.config)
			}
		}
	}
	if f.approve {
		if err := approveAll(e, next, old, approval, f.yes); err != nil {
			return err
		}
	}
	if err := next.Write(f.out); err != nil {
		return fmt.Errorf("writing %s: %w", f.out, err)
	}
	total, approved := lockCounts(next)
	fmt.Fprintf(e.stdout, "wrote %s: %d server(s), %d definition(s), %d pending\n", f.out, len(next.Servers), total, total-approved)
	if total > approved {
		fmt.Fprintf(e.stdout, "review with 'mcpseal lock diff NAME'; approve with 'mcpseal lock approve NAME TOOL --digest sha256:...' or 'mcpseal lock --approve'\n")
	}
	return nil
}

func lockCounts(l *lock.Lock) (total, approved int) {
	for _, name := range l.Names() {
		e, _ := l.Entry(name)
		t, a := e.Counts()
		total, approved = total+t, approved+a
	}
	return total, approved
}

// reportEntry summarises what lock learned about one server.
func reportEntry(w io.Writer, name string, entry, prev *lock.Entry) {
	var before *contract.Contract
	if prev != nil {
		before = prev.Contract()
	}
	changes := contract.Compare(before, entry.Contract())
	added, changed, removed := 0, 0, 0
	for _, ch := range changes {
		switch ch.Op {
		case contract.OpAdded:
			added++
		case contract.OpChanged:
			changed++
		case contract.OpRemoved:
			removed++
		}
	}
	pkg := "no package (not a registry launch)"
	switch {
	case entry.Package != nil:
		pkg = entry.Package.String()
	case entry.DefinitionsOnly:
		pkg = "definitions only (package not pinned)"
	}
	total, approved := entry.Counts()
	fmt.Fprintf(w, "%s: %s; %d definition(s): %d new, %d changed, %d removed, %d pending\n",
		name, pkg, total, added, changed, removed, total-approved)
	for _, p := range entry.Pending() {
		fmt.Fprintf(w, "  pending %s %s\n", pendingWhat(p), p.Digest)
	}
}

func pendingWhat(p lock.Pending) string {
	if p.Kind == contract.InstructionsKind {
		return "instructions"
	}
	return p.Kind.Singular() + " " + oneLine(p.Name)
}

// reportFailure explains why a server could not be locked or checked,
// with the end of its stderr (server text, escaped) when there is one.
func reportFailure(w io.Writer, name string, err error) {
	fmt.Fprintf(w, "mcpseal: error: %s: %v\n", name, err)
	var pe *probe.Error
	if errors.As(err, &pe) && len(pe.Stderr) > 0 {
		showStderr(w, pe.Stderr)
	}
}

func showStderr(w io.Writer, b []byte) {
	fmt.Fprintf(w, "  the end of its stderr:\n")
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  | %s\n", oneLine(l))
	}
}

// approveAll shows every definition that is not approved and, once
// confirmed, approves them all.
func approveAll(e *env, next, old *lock.Lock, a lock.Approval, yes bool) error {
	n := 0
	for _, name := range next.Names() {
		entry, _ := next.Entry(name)
		pending := entry.Pending()
		if len(pending) == 0 {
			continue
		}
		n += len(pending)
		var before *contract.Contract
		if old != nil {
			if prev, ok := old.Entry(name); ok {
				before = prev.ApprovedContract()
			}
		}
		fmt.Fprintf(e.stderr, "\n== %s: %d definition(s) to approve ==\n\n", name, len(pending))
		if err := contract.RenderDiff(e.stderr, before, entry.Contract(), contract.Compare(before, entry.Contract())); err != nil {
			return err
		}
		fmt.Fprintln(e.stderr)
	}
	if n == 0 {
		return nil
	}
	if err := confirm(e, yes, fmt.Sprintf("approve these %d definition(s)?", n)); err != nil {
		return err
	}
	for _, name := range next.Names() {
		entry, _ := next.Entry(name)
		for _, p := range entry.Pending() {
			a.Digest = p.Digest
			if err := entry.Approve(p.Kind, p.Name, a); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(e.stdout, "approved %d definition(s)\n", n)
	return nil
}

// newApproval builds an approval record stamped now.
func newApproval(by, via, ref, digest string) (lock.Approval, error) {
	a := lock.Approval{Digest: digest, ApprovedBy: by, Via: via, Ref: ref, Time: time.Now().UTC().Format(time.RFC3339)}
	probeDigest := a
	probeDigest.Digest = "sha256:" + strings.Repeat("0", 64)
	if digest == "" {
		return a, probeDigest.Validate()
	}
	return a, a.Validate()
}

func runLockCheck(e *env, f lockFlags) error {
	l, data, err := lock.ReadFile(f.out)
	if errors.Is(err, fs.ErrNotExist) {
		return exitWith(ExitFailure, withHint(fmt.Errorf("%s: %w", f.out, err), "run 'mcpseal lock' to write the lock, then commit it"))
	} else if err != nil {
		return exitWith(ExitFailure, withHint(fmt.Errorf("%s: %w", f.out, err), "run 'mcpseal lock verify --lock %s' to see every fault", f.out))
	}
	if host, err := hostConfig(e, f.hostConfig); err != nil {
		return err
	} else if host != nil {
		if err := lock.CheckSignature(f.out, data, host); err != nil {
			return exitWith(ExitFailure, err)
		}
	}
	s, err := f.survey(e)
	if err != nil {
		return err
	}
	targets, err := s.Targets()
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	findings := s.Check(ctx, targets, l)
	if f.asJSON {
		if err := writeJSON(e.stdout, checkJSONOf(findings)); err != nil {
			return err
		}
	} else {
		printFindings(e.stdout, targets, l, findings)
	}
	if survey.Failed(findings) {
		return exitWith(ExitFailure, fmt.Errorf("the servers differ from %s", f.out))
	}
	if !f.asJSON {
		fmt.Fprintf(e.stdout, "ok: every server matches %s\n", f.out)
	}
	return nil
}

func printFindings(w io.Writer, targets []survey.Target, l *lock.Lock, findings []survey.Finding) {
	names := map[string]bool{}
	for _, t := range targets {
		names[t.Name] = true
	}
	for _, n := range l.Names() {
		names[n] = true
	}
	byServer := map[string][]survey.Finding{}
	for _, f := range findings {
		byServer[f.Server] = append(byServer[f.Server], f)
	}
	for _, name := range sortedNames(names) {
		fs := byServer[name]
		if !survey.Failed(fs) && !hasCode(fs, survey.NoteRemote) {
			fmt.Fprintf(w, "ok    %s\n", name)
		}
		for _, f := range fs {
			tag := "note "
			if f.Fail {
				tag = "FAIL "
			}
			fmt.Fprintf(w, "%s %s: %s: %s\n", tag, name, f.Code, f.Message)
			for _, ch := range f.Changes {
				what := "instructions"
				if ch.Kind != contract.InstructionsKind {
					what = ch.Kind.Singular() + " " + oneLine(ch.Name)
				}
				fmt.Fprintf(w, "      %s %s: %s\n", ch.Op, what, strings.Join(ch.Codes(), ", "))
			}
			if len(f.Changes) > 0 {
				fmt.Fprintln(w)
				_ = contract.RenderDiff(w, f.Locked, f.Observed, f.Changes)
				fmt.Fprintln(w)
			}
			if len(f.Stderr) > 0 {
				showStderr(w, f.Stderr)
			}
		}
	}
}

func hasCode(fs []survey.Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

// checkJSON is the output of lock --check --json.
type checkJSON struct {
	Version  int           `json:"version"`
	OK       bool          `json:"ok"`
	Findings []findingJSON `json:"findings"`
}

type findingJSON struct {
	Server  string       `json:"server"`
	Code    string       `json:"code"`
	Fail    bool         `json:"fail"`
	Message string       `json:"message"`
	Changes []changeJSON `json:"changes,omitempty"`
}

type changeJSON struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"` // reduced by contract.SafeName
	Op     string   `json:"op"`
	Old    string   `json:"old,omitempty"`
	New    string   `json:"new,omitempty"`
	Labels []string `json:"labels"`
}

func checkJSONOf(findings []survey.Finding) checkJSON {
	out := checkJSON{Version: jsonVersion, OK: !survey.Failed(findings), Findings: []findingJSON{}}
	for _, f := range findings {
		fj := findingJSON{Server: f.Server, Code: f.Code, Fail: f.Fail, Message: f.Message}
		for _, ch := range f.Changes {
			cj := changeJSON{Kind: string(ch.Kind), Op: string(ch.Op), Labels: ch.Codes()}
			if ch.Kind != contract.InstructionsKind {
				cj.Name = contract.SafeName(ch.Name)
			}
			if ch.Old != "" {
				cj.Old = "sha256:" + ch.Old
			}
			if ch.New != "" {
				cj.New = "sha256:" + ch.New
			}
			fj.Changes = append(fj.Changes, cj)
		}
		out.Findings = append(out.Findings, fj)
	}
	return out
}

// hostConfig loads the host config named by flag, else by the
// environment; nil when neither names one.
func hostConfig(e *env, flag string) (*lock.HostConfig, error) {
	path := flag
	if path == "" {
		path = e.getenv(lock.HostConfigEnv)
	}
	if path == "" {
		return nil, nil
	}
	h, err := lock.LoadHostConfig(path)
	if err != nil {
		return nil, exitWith(ExitFailure, err)
	}
	return h, nil
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// lockFileFlag adds --lock FILE to a lock subcommand.
func lockFileFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "lock", lock.FileName, "the lock `FILE`")
}

// openEntry reads the lock (integrity checked) and the entry of name.
func openEntry(path, name string) (*lock.Lock, *lock.Entry, error) {
	l, _, err := lock.ReadFile(path)
	if err != nil {
		return nil, nil, withHint(fmt.Errorf("%s: %w", path, err), "run 'mcpseal lock verify --lock %s' to see every fault", path)
	}
	entry, ok := l.Entry(name)
	if !ok {
		return nil, nil, withHint(fmt.Errorf("%s has no server %q", path, name), "the servers are: %s", strings.Join(l.Names(), ", "))
	}
	return l, entry, nil
}

func newLockDiffCmd(e *env) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "diff NAME [--lock FILE]",
		Short: "Show a server's pending definitions in full, with their labels",
		Long: `Show every definition of server NAME that the lock holds without approval,
in full, with its change labels and the command that approves exactly it.
Invisible and unusual characters are spelled out. Nothing is started.`,
		Args: exactArgs(1, "one server name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, entry, err := openEntry(path, args[0])
			if err != nil {
				return err
			}
			pending := entry.Pending()
			if len(pending) == 0 {
				fmt.Fprintf(e.stdout, "%s: every definition is approved\n", args[0])
				return nil
			}
			approved := entry.ApprovedContract()
			if err := contract.RenderDiff(e.stdout, approved, entry.Contract(), contract.Compare(approved, entry.Contract())); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout)
			for _, p := range pending {
				fmt.Fprintf(e.stdout, "approve %s: mcpseal lock approve %s\n", pendingWhat(p), approveArgs(args[0], p))
			}
			return nil
		},
	}
	lockFileFlag(cmd, &path)
	return cmd
}

func approveArgs(server string, p lock.Pending) string {
	if p.Kind == contract.InstructionsKind {
		return shellQuote(server) + " --instructions --digest " + p.Digest
	}
	return fmt.Sprintf("%s %s --kind %s --digest %s", shellQuote(server), shellQuote(p.Name), p.Kind, p.Digest)
}

// shellQuote quotes s for a copy-paste command line when it needs it;
// server text is shown with invisible characters spelled out.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(oneLine(s), "'", `'\''`) + "'"
}

type approveFlags struct {
	path, digest, kind string
	instructions       bool
	by, via, ref       string
}

// target resolves which definition NAME [DEF] names.
func (f *approveFlags) target(entry *lock.Entry, args []string) (contract.Kind, string, error) {
	if f.instructions {
		if len(args) != 1 {
			return "", "", &usageError{errors.New("--instructions takes only the server name")}
		}
		return contract.InstructionsKind, "", nil
	}
	if len(args) != 2 {
		return "", "", &usageError{errors.New("name the server and the definition (or --instructions)")}
	}
	if f.kind != "" {
		k := contract.Kind(f.kind)
		if !slices.Contains(contract.Kinds, k) {
			return "", "", &usageError{fmt.Errorf("--kind must be one of tools, prompts, resources, resourceTemplates")}
		}
		return k, args[1], nil
	}
	kinds := entry.KindsOf(args[1])
	switch len(kinds) {
	case 0:
		return "", "", fmt.Errorf("server %q has no definition named %s in the lock", args[0], shellQuote(args[1]))
	case 1:
		return kinds[0], args[1], nil
	}
	return "", "", &usageError{fmt.Errorf("%s names a definition of several kinds; choose one with --kind", shellQuote(args[1]))}
}

func newLockApproveCmd(e *env) *cobra.Command {
	var f approveFlags
	cmd := &cobra.Command{
		Use:   "approve NAME DEFINITION --digest sha256:... | approve NAME --instructions --digest sha256:...",
		Short: "Approve one locked definition, digest for digest",
		Long: `Record an approval for one definition of server NAME (a tool, prompt,
resource or resource template; --kind when a name is used by several kinds),
or for its instructions. --digest must be the locked definition's digest, as
'mcpseal lock diff NAME' shows it: an approval is for exactly what was
reviewed. --by is recorded as typed and never verified; in a pull request
it is the author's claim, and the merge commit and the manifest signature
record who approved. A signed lock must be signed again afterwards.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, entry, err := openEntry(f.path, args[0])
			if err != nil {
				return err
			}
			k, name, err := f.target(entry, args)
			if err != nil {
				return err
			}
			a, err := newApproval(f.by, f.via, f.ref, f.digest)
			if err != nil {
				return &usageError{withHint(err, "copy the digest from 'mcpseal lock diff %s'", args[0])}
			}
			var dm *lock.DigestMismatchError
			if err := entry.Approve(k, name, a); errors.As(err, &dm) {
				return withHint(err, "the definition in the lock is not the one reviewed; run 'mcpseal lock diff %s'", args[0])
			} else if err != nil {
				return err
			}
			if err := l.Write(f.path); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "approved %s of %s: %s\n", approvedWhat(k, name), args[0], a.Digest)
			return nil
		},
	}
	lockFileFlag(cmd, &f.path)
	cmd.Flags().StringVar(&f.digest, "digest", "", "the definition's `DIGEST` (sha256:...)")
	cmd.Flags().StringVar(&f.kind, "kind", "", "tools, prompts, resources or resourceTemplates")
	cmd.Flags().BoolVar(&f.instructions, "instructions", false, "approve the server's instructions")
	addApprovalFlags(cmd.Flags(), &f.by, &f.via, &f.ref)
	_ = cmd.MarkFlagRequired("digest")
	return cmd
}

func approvedWhat(k contract.Kind, name string) string {
	if k == contract.InstructionsKind {
		return "the instructions"
	}
	return k.Singular() + " " + oneLine(name)
}

func newLockRevokeCmd(e *env) *cobra.Command {
	var f approveFlags
	cmd := &cobra.Command{
		Use:   "revoke NAME DEFINITION | revoke NAME --instructions",
		Short: "Drop one approval: the definition is withheld again",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, entry, err := openEntry(f.path, args[0])
			if err != nil {
				return err
			}
			k, name, err := f.target(entry, args)
			if err != nil {
				return err
			}
			if err := entry.Revoke(k, name); err != nil {
				return err
			}
			if err := l.Write(f.path); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "revoked the approval of %s of %s; it is pending again\n", approvedWhat(k, name), args[0])
			return nil
		},
	}
	lockFileFlag(cmd, &f.path)
	cmd.Flags().StringVar(&f.kind, "kind", "", "tools, prompts, resources or resourceTemplates")
	cmd.Flags().BoolVar(&f.instructions, "instructions", false, "revoke the approval of the server's instructions")
	return cmd
}
