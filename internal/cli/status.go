package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/wire"
)

func init() { register(newStatusCmd) }

type statusFlags struct {
	configs  []string
	projects []string
	noScan   bool
	asJSON   bool
}

func newStatusCmd(e *env) *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "status [--json] [--config FILE]... [--project DIR]... [--no-project-scan]",
		Short: "Show which MCP servers in which clients mcpseal protects",
		Long: `Status reads every client's config and says, for each server:

  protected         launched through mcpseal run (guard or strict)
  monitor-only      launched through mcpseal with --posture monitor, which
                    reports drift and forwards it: never counted as protection
  not-wrapped       launched or reached directly
  broken            the launch line names mcpseal but mcpseal would refuse
                    it (or the binary is gone): the server does not start
  baseline-outside  the entry sets MCPSEAL_HOME elsewhere: its pins are
                    kept where list, review and approve do not look

It also counts the servers clients load from elsewhere: Gemini CLI
extensions, Claude Code and Codex plugins, VS Code, Cursor, Windsurf and Zed
extensions, and the files an administrator owns (docs/clients.md). Those
wrap cannot edit are not-wrapped, with the reason.

It also shows the lock each wrapped line uses. Project configs (.mcp.json,
.cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json,
.zed/settings.json, .codex/config.toml) are found in the current folder, the
folders Claude Code knows (~/.claude.json) and each --project DIR; they are
counted and reported, never edited. With --no-project-scan the count is a
floor, and the summary says so.

Exit status: 0 when every server found is protected and every config could
be read, 1 otherwise.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(e, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print JSON (version 1)")
	fl.StringArrayVar(&f.configs, "config", nil, "read only this `FILE` (repeatable)")
	fl.StringArrayVar(&f.projects, "project", nil, "also scan the project configs in `DIR` (repeatable)")
	fl.BoolVar(&f.noScan, "no-project-scan", false, "do not look for project configs")
	return cmd
}

// statusJSON is status --json, version 1.
type statusJSON struct {
	Version   int                 `json:"version"`
	Enforcing bool                `json:"enforcing"`
	Summary   statusSummary       `json:"summary"`
	Files     []wire.FileStatus   `json:"files"`
	Servers   []wire.ServerStatus `json:"servers"`
}

type statusSummary struct {
	Servers      int            `json:"servers"`
	States       map[string]int `json:"states"`
	FilesScanned int            `json:"filesScanned"`
	ProjectFiles int            `json:"projectFiles"`
	Unreadable   int            `json:"unreadable"`
	ProjectScan  bool           `json:"projectScan"`
}

func runStatus(e *env, f statusFlags) error {
	o, err := wireOptions(e, wireFlags{})
	if err != nil {
		return err
	}
	files, err := wireTargets(e, wireFlags{configs: f.configs})
	if err != nil {
		return err
	}
	if len(f.configs) == 0 {
		files = append(files, statusProjects(e, f)...)
	}
	r := wire.Status(files, o)
	sum := statusSummary{Servers: len(r.Servers), FilesScanned: len(r.Files), ProjectScan: !f.noScan && len(f.configs) == 0,
		States: map[string]int{}}
	for _, st := range []wire.State{wire.Protected, wire.MonitorOnly, wire.NotWrapped, wire.Broken, wire.BaselineOutside} {
		sum.States[string(st)] = 0
	}
	for _, s := range r.Servers {
		sum.States[string(s.State)]++
	}
	for _, fs := range r.Files {
		if fs.Project {
			sum.ProjectFiles++
		}
		if fs.Error != "" {
			sum.Unreadable++
		}
	}
	if f.asJSON {
		if err := writeJSON(e.stdout, statusJSON{Version: 1, Enforcing: r.Enforcing(), Summary: sum, Files: r.Files, Servers: r.Servers}); err != nil {
			return err
		}
	} else {
		printStatus(e, r, sum)
	}
	if !r.Enforcing() {
		return exitWith(ExitFailure, nil)
	}
	return nil
}

// statusProjects finds the project configs status reports.
func statusProjects(e *env, f statusFlags) []wire.File {
	var dirs []string
	if !f.noScan {
		if wd, err := os.Getwd(); err == nil {
			dirs = append(dirs, wd)
		}
		if we, err := wireEnv(e); err == nil {
			for _, uf := range wire.UserFiles(we) {
				if uf.Shape == wire.ShapeClaudeCode {
					dirs = append(dirs, wire.KnownProjectDirs(uf.Path)...)
				}
			}
		}
	}
	for _, d := range f.projects {
		if a, err := filepath.Abs(d); err == nil {
			dirs = append(dirs, a)
		}
	}
	var files []wire.File
	for _, d := range dirs {
		files = append(files, wire.ProjectFiles(d)...)
	}
	return wire.Existing(files)
}

func printStatus(e *env, r *wire.Report, sum statusSummary) {
	w := e.stdout
	for _, fs := range r.Files {
		tag := fs.Client
		if fs.Source != "" {
			tag += " (" + oneLine(fs.Source) + ")"
		}
		if fs.Project {
			tag += " (project, not edited)"
		}
		fmt.Fprintf(w, "%s  %s\n", tag, oneLine(fs.Path))
		if fs.Error != "" {
			fmt.Fprintf(w, "  unreadable: %s\n", oneLine(fs.Error))
			continue
		}
		if fs.Servers == 0 {
			fmt.Fprintln(w, "  no servers")
		}
		for _, s := range r.Servers {
			if s.File != fs.Path {
				continue
			}
			name := oneLine(s.Name)
			if s.Source != fs.Source {
				name += " (" + oneLine(s.Source) + ")"
			}
			if s.Scope != "user" {
				name += " [" + oneLine(s.Scope) + "]"
			}
			fmt.Fprintf(w, "  %-16s %s", s.State, name)
			if s.Posture != "" && s.Posture != "guard" {
				fmt.Fprintf(w, " (posture %s)", s.Posture)
			}
			if s.Lock != "" {
				fmt.Fprintf(w, " (lock %s)", oneLine(s.Lock))
			}
			if s.Disabled {
				fmt.Fprint(w, " (disabled)")
			}
			if s.Reason != "" {
				fmt.Fprintf(w, ": %s", oneLine(s.Reason))
			}
			fmt.Fprintln(w)
		}
	}
	st := sum.States
	fmt.Fprintf(w, "summary: %d server(s): %d protected, %d monitor-only, %d not wrapped, %d broken, %d baseline outside; %d config file(s) scanned (%d project), %d unreadable\n",
		sum.Servers, st["protected"], st["monitor-only"], st["not-wrapped"], st["broken"], st["baseline-outside"], sum.FilesScanned, sum.ProjectFiles, sum.Unreadable)
	if !sum.ProjectScan {
		fmt.Fprintln(w, "note: project configs were not scanned; the count is a floor")
	}
	if r.Enforcing() {
		fmt.Fprintln(w, "every server found is protected")
	} else {
		fmt.Fprintln(w, "not everything found is protected: run 'mcpseal wrap'")
	}
}
