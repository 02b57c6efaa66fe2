package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/wire"
)

func init() { register(newWrapCmd) }

// wireFlags are the flags wrap, unwrap and status share.
type wireFlags struct {
	configs    []string
	project    string
	lock       string
	posture    string
	skipRemote bool
	yes        bool
	dryRun     bool
}

func newWrapCmd(e *env) *cobra.Command {
	var f wireFlags
	cmd := &cobra.Command{
		Use:   "wrap [--config FILE]... [--project[=DIR]] [--lock PATH] [--skip-remote] [--yes] [--dry-run]",
		Short: "Put mcpseal in front of every MCP server in every client",
		Long: `Wrap finds the MCP servers in every client's config (Claude Desktop, Claude
Code, Cursor, VS Code, Windsurf, Cline, Gemini CLI, Zed, Codex; see
docs/clients.md), shows the plan, and after you confirm rewrites each launch
line as

    mcpseal run --name NAME [--lock PATH] --home DIR -- <original command> <args...>

--home names this $MCPSEAL_HOME, so a client that filters the environment
it gives servers cannot move the pins. Servers from extensions and plugins
are wrapped where they are the user's own files (a linked Gemini CLI
extension, a plugin Claude Code reads from a local folder); the copies a
client replaces on update are left alone, and listed.

Remote (URL) servers become 'mcpseal run --url URL --name NAME', their
headers moved into a credential file in $MCPSEAL_HOME/credentials; pass
--skip-remote to leave them alone.

Only the command and args of each entry change: comments, key order,
indentation and every other field stay as they were. Each file is backed up
to $MCPSEAL_HOME/backups/<time>/ first and replaced atomically. Wrapping
twice changes nothing; a wrapped entry only gets the flags it lacks. A file
mcpseal cannot read is reported and left alone. Project configs that a team
shares (.mcp.json, .vscode/mcp.json, ...) are edited only with --project.

The launch lines name this mcpseal by its absolute path (symbolic links
resolved). After an upgrade that moves the binary, run 'mcpseal wrap' again:
it points every wrapped entry at the new path.

It asks for confirmation on a terminal; without one it writes nothing
unless --yes is given. Restart the clients afterwards.

Exit status: 0 when every file was handled, 1 when a file could not be read
or written or an entry could not be wrapped (all are listed), 2 usage.`,
		Example: `  mcpseal wrap --dry-run
  mcpseal wrap --yes --skip-remote
  mcpseal wrap --project --lock mcpseal.lock
  mcpseal wrap --config ~/my-agent/mcp.json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWrap(e, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.configs, "config", nil, "edit only this `FILE` (any file in one of the client shapes; repeatable)")
	fl.StringVar(&f.project, "project", "", "also edit the project configs in `DIR` (default: the current folder)")
	fl.Lookup("project").NoOptDefVal = "."
	fl.StringVar(&f.lock, "lock", "", "add --lock `PATH` to every wrapped line (absolute, or relative with --project)")
	fl.StringVar(&f.posture, "posture", "", "add --posture `P` (guard, strict or monitor; monitor is not protection)")
	fl.BoolVar(&f.skipRemote, "skip-remote", false, "leave remote (URL) servers alone")
	fl.BoolVarP(&f.yes, "yes", "y", false, "write without asking")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show the plan and write nothing")
	return cmd
}

// wireOptions builds what the wire package needs from the environment.
func wireOptions(e *env, f wireFlags) (wire.Options, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return wire.Options{}, withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	self, err := selfPath()
	if err != nil {
		return wire.Options{}, err
	}
	def, err := pin.DefaultHome(func(k string) string {
		if k == "MCPSEAL_HOME" {
			return ""
		}
		return e.getenv(k)
	})
	if err != nil {
		def = "" // no HOME: only MCPSEAL_HOME says where state is
	}
	return wire.Options{Self: self, Home: home, DefaultHome: def, Lock: f.lock, Posture: f.posture, SkipRemote: f.skipRemote, Run: RunSyntax(), Now: time.Now}, nil
}

// selfPath is the absolute path of this binary, symbolic links resolved:
// the path a client will start. A launcher or package-manager shim would
// move under it on upgrade; the resolved path is what ran.
func selfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this mcpseal binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Abs(p)
}

// wireEnv is what discovery reads of this machine.
func wireEnv(e *env) (wire.Env, error) {
	home := e.getenv("HOME")
	if runtime.GOOS == "windows" && home == "" {
		home = e.getenv("USERPROFILE")
	}
	if home == "" || !filepath.IsAbs(home) {
		return wire.Env{}, errors.New("cannot find the home folder (HOME)")
	}
	// The folder the clients would run in, for per-folder settings; a
	// folder that cannot be read stays unknown.
	// Node's process.cwd() is the physical path (getcwd), links resolved.
	dir, err := os.Getwd()
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		dir = ""
	}
	return wire.Env{GOOS: runtime.GOOS, Home: home, Getenv: e.getenv, Dir: dir}, nil
}

// wireTargets lists the files a command works on: the --config files, or
// every client's user config; plus the project configs of --project.
func wireTargets(e *env, f wireFlags) ([]wire.File, error) {
	var files []wire.File
	if len(f.configs) > 0 {
		for _, c := range f.configs {
			p, err := filepath.Abs(c)
			if err != nil {
				return nil, err
			}
			shape, err := wire.ShapeOfFile(p)
			if err != nil {
				if u := errors.Unwrap(err); u != nil {
					err = u
				}
				return nil, &usageError{fmt.Errorf("--config %s: %w", c, err)}
			}
			files = append(files, wire.File{Client: "custom", Path: p, Shape: shape})
		}
	} else {
		we, err := wireEnv(e)
		if err != nil {
			return nil, err
		}
		files = wire.Existing(append(append(wire.UserFiles(we), wire.SystemFiles(we)...), wire.LoadedFiles(we)...))
	}
	if f.project != "" {
		dir, err := filepath.Abs(f.project)
		if err != nil {
			return nil, err
		}
		files = append(files, wire.Existing(wire.ProjectFiles(dir))...)
	}
	return files, nil
}

func checkWireFlags(f wireFlags, o wire.Options) error {
	if f.posture != "" {
		if _, err := pin.ParsePosture(f.posture); err != nil {
			return &usageError{err}
		}
	}
	if f.lock != "" {
		if !o.Run.Has("lock") {
			return &usageError{errors.New("this mcpseal's run command has no --lock yet; wrap without --lock")}
		}
		if !filepath.IsAbs(f.lock) && f.project == "" {
			return &usageError{withHint(errors.New("--lock must be an absolute path"),
				"a relative lock is read from the folder the client starts the server in; that is only predictable for a project config (--project)")}
		}
	}
	return nil
}

func runWrap(e *env, f wireFlags) error {
	o, err := wireOptions(e, f)
	if err != nil {
		return err
	}
	if err := checkWireFlags(f, o); err != nil {
		return err
	}
	files, err := wireTargets(e, f)
	if err != nil {
		return err
	}
	recs, err := wire.LoadRecords(o.Home)
	if err != nil {
		return err
	}
	if f.posture == "monitor" {
		fmt.Fprintln(e.stderr, "mcpseal: warning: --posture monitor forwards drift: wrapped servers will not be protected")
	}
	return runPlan(e, f, wire.PlanWrap(files, o, recs), "wrap")
}

// runPlan shows a plan, asks, applies it and reports.
func runPlan(e *env, f wireFlags, p *wire.Plan, verb string) error {
	writes, failed := printPlan(e, p, verb)
	if f.dryRun {
		fmt.Fprintln(e.stdout, "dry run: nothing was written")
		return planExit(failed)
	}
	if writes == 0 {
		fmt.Fprintln(e.stdout, "nothing to change")
		return planExit(failed)
	}
	if err := confirm(e, f.yes, fmt.Sprintf("%s: write %d file(s)?", verb, writes)); err != nil {
		return err
	}
	dir, err := p.Apply()
	for _, fp := range p.Files {
		switch {
		case fp.Err != nil && fp.Changes != nil:
			fmt.Fprintf(e.stdout, "not written: %s: %v\n", fp.File.Path, fp.Err)
			failed = true
		case fp.Writes():
			fmt.Fprintf(e.stdout, "wrote %s\n", fp.File.Path)
		}
	}
	if dir != "" {
		fmt.Fprintf(e.stdout, "backups: %s\n", dir)
		fmt.Fprintln(e.stdout, "restart the clients to apply the change")
	}
	if err != nil {
		failed = true
	}
	return planExit(failed)
}

func planExit(failed bool) error {
	if failed {
		return exitWith(ExitFailure, nil)
	}
	return nil
}

// printPlan shows the plan; it returns how many files it would write and
// whether anything failed or was refused.
func printPlan(e *env, p *wire.Plan, verb string) (writes int, failed bool) {
	w := e.stdout
	if len(p.Files) == 0 {
		fmt.Fprintln(w, "no client config found (see docs/clients.md, or name one with --config)")
		return 0, false
	}
	unwrappable := 0
	for _, fp := range p.Files {
		tag := fp.File.Client
		if fp.File.Source != "" {
			tag += " (" + oneLine(fp.File.Source) + ")"
		}
		if fp.File.Project {
			tag += " (project)"
		}
		fmt.Fprintf(w, "%s  %s\n", tag, oneLine(fp.File.Path))
		if fp.Err != nil {
			fmt.Fprintf(w, "  left alone: %v\n", fp.Err)
			failed = true
			continue
		}
		if len(fp.Changes) == 0 {
			fmt.Fprintln(w, "  no servers")
		}
		for _, c := range fp.Changes {
			name := oneLine(c.Entry.Name)
			if c.Entry.Scope != "user" {
				name += " [" + oneLine(c.Entry.Scope) + "]"
			}
			fmt.Fprintf(w, "  %-7s %s", c.Action, name)
			if c.Reason != "" {
				fmt.Fprintf(w, ": %s", oneLine(c.Reason))
			}
			fmt.Fprintln(w)
			if len(c.After) > 0 {
				fmt.Fprintf(w, "          was: %s\n", oneLine(shellJoin(c.Before)))
				fmt.Fprintf(w, "          now: %s\n", oneLine(shellJoin(c.After)))
			}
			if c.Action == wire.Refuse {
				failed = true
			}
			if c.Action == wire.Skip && fp.File.NoWrap != "" && verb == "wrap" {
				unwrappable++
			}
		}
		if fp.Writes() {
			writes++
		}
	}
	if unwrappable > 0 {
		fmt.Fprintf(w, "note: %d server(s) stay unprotected: mcpseal cannot wrap them where the client keeps them (see above); 'mcpseal status' counts them\n", unwrappable)
	}
	return writes, failed
}

// shellJoin shows a command line for a person.
func shellJoin(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && !strings.ContainsAny(a, " \t'\"\\$`!*?;&|<>(){}[]#~") {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}
