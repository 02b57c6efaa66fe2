package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/launch"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

func init() {
	register(newProfileCmd)
	register(newSandboxInitCmd)
}

func newProfileCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Create, show and check host-pinned launch profiles",
		Long: `A launch profile pins exactly what runs for a stdio server and how it is
confined: the absolute executable and the SHA-256 of its bytes, the package
tree it runs (an h1: directory digest), the exact argv, the working folder,
the environment (empty unless named), limits, the files it may read and
write, its network (none, loopback, or egress to a host allowlist), and the
confinements that must be enforced. Profiles live in $MCPSEAL_HOME/profiles
(default ~/.mcpseal/profiles); NAME may also be the path of a profile file.
The format is in docs/launch-profiles.md, the sandbox in docs/sandbox.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newProfileCreateCmd(e), newProfileShowCmd(e), newProfileCheckCmd(e))
	return cmd
}

type createFlags struct {
	yes, replace bool
	ro, rw, pass []string
	set          []string
	network      string
	allow        []string
}

func newProfileCreateCmd(e *env) *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   "create NAME [flags] -- COMMAND [ARGS...]",
		Short: "Propose a launch profile for a command, show it, and write it on confirmation",
		Long: `Create resolves COMMAND to what really runs: a program on PATH by its real
path; a #! script or an interpreter's script (node, python...) to the
interpreter as the executable and the script's package folder as the tree;
npx PKG and uvx TOOL to the package already installed in their cache
(nothing is downloaded: run it once first). It proposes a profile with the
digests filled in and conservative defaults: read-only access to the
server's own files and the system's libraries, no network, an empty
environment, finite limits, every confinement required. It shows the
profile and writes it to $MCPSEAL_HOME/profiles/NAME.json when you confirm
(on a terminal; --yes confirms without asking).`,
		Example: `  mcpseal profile create memory --set-env MEMORY_FILE_PATH=$HOME/mem/memory.jsonl --rw $HOME/mem -- npx -y @modelcontextprotocol/server-memory
  mcpseal profile create files --rw $HOME/notes -- npx -y @modelcontextprotocol/server-filesystem $HOME/notes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash != 1 || len(args) < 2 {
				return &usageError{withHint(errors.New("create needs a NAME, then the server command after --"), "mcpseal profile create NAME -- COMMAND [ARGS...]")}
			}
			return runProfileCreate(e, f, args[0], args[1:])
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.yes, "yes", "y", false, "write the profile without asking")
	fl.BoolVar(&f.replace, "replace", false, "replace an existing profile of that name")
	fl.StringArrayVar(&f.ro, "ro", nil, "also allow reading `PATH` (repeatable)")
	fl.StringArrayVar(&f.rw, "rw", nil, "allow reading and writing `PATH` (repeatable)")
	fl.StringArrayVar(&f.pass, "pass-env", nil, "pass the variable `NAME` from mcpseal's environment (repeatable)")
	fl.StringArrayVar(&f.set, "set-env", nil, "set `NAME=VALUE` in the server's environment (repeatable)")
	fl.StringVar(&f.network, "network", "none", "network policy: `none`, loopback or egress")
	fl.StringArrayVar(&f.allow, "allow", nil, "egress: allow `HOST:PORT` (repeatable)")
	return cmd
}

func runProfileCreate(e *env, f createFlags, name string, argv []string) error {
	if !launch.ValidName(name) {
		return &usageError{errors.New("NAME must be 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")}
	}
	set := map[string]string{}
	for _, kv := range f.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return &usageError{errors.New("--set-env takes NAME=VALUE")}
		}
		set[k] = v
	}
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	p, notes, err := launch.Propose(launch.ProposeOptions{
		Name: name, Argv: argv, Getenv: e.getenv, Dir: wd,
		ReadOnly: f.ro, ReadWrite: f.rw, Pass: f.pass, Set: set,
		Network: launch.Network{Mode: launch.NetworkMode(f.network), Allow: f.allow},
	})
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "mcpseal: %s\n", n)
	}
	if err != nil {
		return err
	}
	text, err := p.MarshalIndent()
	if err != nil {
		return err
	}
	digest, _ := p.Digest()
	fmt.Fprintf(e.stdout, "%s", text)
	fmt.Fprintf(e.stdout, "digest: %s\n", digest)
	path, _ := launch.ProfilePath(home, name)
	if err := confirm(e, f.yes, fmt.Sprintf("write this profile to %s?", path)); err != nil {
		return err
	}
	if _, err := launch.Save(home, p, f.replace); err != nil {
		if errors.Is(err, launch.ErrProfileExists) {
			return withHint(err, "pass --replace to replace it (a changed profile is a changed server: its contract is pinned afresh)")
		}
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\nrun it with: mcpseal run --profile %s\n", path, name)
	return nil
}

func newProfileShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME [--json]",
		Short: "Show a launch profile and its digest",
		Long: `Show prints a launch profile in its canonical form and its digest: "sha256:"
over its RFC 8785 canonical form. The digest is part of the server's
identity, so a changed profile is a changed server. NAME is a profile
name or the path of a profile file.`,
		Args: exactArgs(1, "one profile name or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProfileShow(e, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// profileShowJSON is the --json output of profile show (version 1).
type profileShowJSON struct {
	Version int             `json:"version"`
	Name    string          `json:"name"`
	File    string          `json:"file"`
	Digest  string          `json:"digest"`
	Profile json.RawMessage `json:"profile"`
}

func loadProfile(e *env, ref string) (*launch.Profile, string, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil && !launch.IsFileRef(ref) {
		return nil, "", withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	p, path, err := launch.Load(home, ref)
	if errors.Is(err, launch.ErrNoProfile) {
		return nil, "", withHint(err, "create one with 'mcpseal profile create %s -- COMMAND [ARGS...]'", oneLine(ref))
	}
	return p, path, err
}

func runProfileShow(e *env, ref string, asJSON bool) error {
	p, path, err := loadProfile(e, ref)
	if err != nil {
		return err
	}
	digest, err := p.Digest()
	if err != nil {
		return err
	}
	if asJSON {
		raw, err := p.Marshal()
		if err != nil {
			return err
		}
		return writeJSON(e.stdout, profileShowJSON{Version: jsonVersion, Name: p.Name, File: path, Digest: digest, Profile: raw})
	}
	text, err := p.MarshalIndent()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "profile  %s\nfile     %s\ndigest   %s\n\n%s", p.Name, path, digest, text)
	return nil
}

func newProfileCheckCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check NAME [--json]",
		Short: "Report line by line whether a profile can launch here",
		Long: `Check verifies the executable and the package tree against their pins and
the working folder, then starts the sandbox's helper, which confines itself
as the profile asks and exits without running anything, and reports each
confinement as enforced on this kernel or not, with its mechanism. Exit
status 1 when anything required is missing: the launch would be refused.`,
		Args: exactArgs(1, "one profile name or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProfileCheck(e, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// profileCheckJSON is the --json output of profile check (version 1).
type profileCheckJSON struct {
	Version int             `json:"version"`
	Name    string          `json:"name"`
	Ready   bool            `json:"ready"`
	Lines   []checkLineJSON `json:"lines"`
}

type checkLineJSON struct {
	Item     string `json:"item"`
	OK       bool   `json:"ok"`
	Required bool   `json:"required"`
	Detail   string `json:"detail"`
}

func runProfileCheck(e *env, ref string, asJSON bool) error {
	p, _, err := loadProfile(e, ref)
	if err != nil {
		return err
	}
	lines, ready := launch.Check(p)
	if asJSON {
		out := profileCheckJSON{Version: jsonVersion, Name: p.Name, Ready: ready, Lines: []checkLineJSON{}}
		for _, l := range lines {
			out.Lines = append(out.Lines, checkLineJSON{Item: l.Item, OK: l.OK, Required: l.Required, Detail: l.Detail})
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		for _, l := range lines {
			status := "ok"
			switch {
			case !l.OK && l.Required:
				status = "MISSING"
			case !l.OK:
				status = "no"
			}
			fmt.Fprintf(e.stdout, "%-8s %-13s %s\n", status, l.Item, l.Detail)
		}
	}
	if !ready {
		return exitWith(ExitFailure, fmt.Errorf("profile %s cannot launch here: a required line is missing", p.Name))
	}
	return nil
}

func newSandboxInitCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:                launch.HelperCommand,
		Short:              "The sandbox's in-namespace helper (started by mcpseal itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := launch.HelperMain(args); code != 0 {
				return exitWith(code, nil)
			}
			return nil
		},
	}
}

// loadProfile makes the plan launch what the profile ref pins; the
// profile's name and digest are the server's identity, so a changed
// profile is a changed server.
func (p *sessionPlan) loadProfile(e *env, ref string) error {
	prof, _, err := loadProfile(e, ref)
	if err != nil {
		return exitWith(ExitRefused, err)
	}
	digest, err := prof.Digest()
	if err != nil {
		return exitWith(ExitRefused, err)
	}
	p.profile = prof
	p.name = prof.Name
	p.id = pin.IdentityForProfile(prof.Name, digest)
	p.maxStderr = prof.Limits.StderrBytes
	return nil
}

// startProfile verifies and starts the profile's server, confined; the
// command given after --, if any, must equal the profile's.
func (p *sessionPlan) startProfile(e *env) (stdio.Server, error) {
	srv, rep, err := launch.Start(p.profile, launch.Request{
		Argv:      p.argv,
		LookupEnv: func(k string) (string, bool) { v := e.getenv(k); return v, v != "" },
		Events:    func(ev launch.Event) { fmt.Fprintf(e.stderr, "mcpseal: %s\n", ev) },
	})
	if err != nil {
		if rep != nil {
			for _, n := range rep.NotEnforced {
				fmt.Fprintf(e.stderr, "mcpseal: not enforced: %s\n", n)
			}
		}
		return nil, exitWith(ExitRefused, withHint(err, "run 'mcpseal profile check %s' to see what is missing", p.profile.Name))
	}
	reportLaunch(e, p.profile, p.id, rep)
	return srv, nil
}

// reportLaunch says on stderr what was verified and what confines the
// server; nothing is claimed that the launch did not enforce.
func reportLaunch(e *env, p *launch.Profile, id pin.Identity, rep *launch.Report) {
	var on, off []string
	for _, c := range rep.Enforced {
		on = append(on, string(c.Confinement))
	}
	for _, c := range rep.NotEnforced {
		off = append(off, string(c.Confinement))
	}
	fmt.Fprintf(e.stderr, "mcpseal: launched %s (%s) under profile %s: executable %s verified", id.Label, id.ID, rep.ProfileDigest, rep.Executable)
	if rep.Tree != "" {
		fmt.Fprintf(e.stderr, ", tree %s verified (%d files)", rep.Tree, rep.TreeFiles)
	}
	fmt.Fprintf(e.stderr, "\nmcpseal: enforced: %s\n", strings.Join(on, ", "))
	if len(off) > 0 {
		fmt.Fprintf(e.stderr, "mcpseal: NOT enforced: %s\n", strings.Join(off, ", "))
	}
}
