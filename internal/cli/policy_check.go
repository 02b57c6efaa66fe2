package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/policy"
)

func init() { register(newPolicyCheckCmd) }

func newPolicyCheckCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "policy-check [FILE] [--json]",
		Short: "Check a host policy file (default: $MCPSEAL_HOME/policy.json)",
		Long: `Check a host policy file without running anything: strict JSON, every key
known and spelled exactly, no key twice, every value in range, every provider
complete. A fault is reported as FILE:LINE:COLUMN: key.path: message, and
exits 1. See docs/policy.md for the format.

Without FILE the policy in $MCPSEAL_HOME (default ~/.mcpseal) is checked;
when there is none, the built-in defaults apply and the check passes.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &usageError{withHint(errors.New("policy-check takes at most one file"), "see 'mcpseal policy-check --help'")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runPolicyCheck(e, file, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/policy.md)")
	return cmd
}

// policyCheckJSON is the --json output of policy-check.
type policyCheckJSON struct {
	Version   int                  `json:"version"`
	OK        bool                 `json:"ok"`
	Source    string               `json:"source"`
	Defaults  bool                 `json:"defaults"`
	Servers   []policyServerJSON   `json:"servers"`
	Providers []policyProviderJSON `json:"providers"`
	Error     *policyErrorJSON     `json:"error,omitempty"`
}

type policyServerJSON struct {
	Key string `json:"key"`
	ID  string `json:"id"`
}

type policyProviderJSON struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type policyErrorJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func runPolicyCheck(e *env, file string, asJSON bool) error {
	explicit := file != ""
	if !explicit {
		home, err := pin.DefaultHome(e.getenv)
		if err != nil {
			return withHint(err, "set MCPSEAL_HOME to an absolute path, or name the file")
		}
		file = policy.DefaultPath(home)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	out := policyCheckJSON{Version: jsonVersion, Source: abs, Servers: []policyServerJSON{}, Providers: []policyProviderJSON{}}
	p, err := policy.Load(abs)
	if err != nil && !explicit && errors.Is(err, fs.ErrNotExist) {
		// Only in mcpseal's home does a missing file mean "the defaults".
		p, err, out.Defaults = policy.Default(), nil, true
	}
	if err != nil {
		return policyCheckFailed(e, out, err, asJSON)
	}
	out.OK = true
	keys := p.ServerKeys()
	for _, id := range sortedStrings(keys) {
		out.Servers = append(out.Servers, policyServerJSON{Key: keys[id], ID: id})
	}
	for _, name := range p.ProviderNames() {
		out.Providers = append(out.Providers, policyProviderJSON{Name: name, Kind: p.ProviderKind(name)})
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	if out.Defaults {
		fmt.Fprintf(e.stdout, "no policy file at %s: the built-in defaults apply (see docs/policy.md)\n", abs)
		return nil
	}
	fmt.Fprintf(e.stdout, "policy ok: %s\n", abs)
	for _, s := range out.Servers {
		fmt.Fprintf(e.stdout, "  server   %s  %s\n", s.ID, oneLine(s.Key))
	}
	for _, pr := range out.Providers {
		fmt.Fprintf(e.stdout, "  provider %s (%s)\n", pr.Name, pr.Kind)
	}
	return nil
}

func policyCheckFailed(e *env, out policyCheckJSON, err error, asJSON bool) error {
	if !asJSON {
		return exitWith(ExitFailure, withHint(err, "the format is in docs/policy.md; mcpseal runs nothing while the policy does not load"))
	}
	pe := &policyErrorJSON{File: out.Source, Message: err.Error()}
	var fe *policy.FileError
	if errors.As(err, &fe) {
		pe.Line, pe.Col, pe.Path, pe.Message = fe.Line, fe.Col, fe.Path, fe.Msg
	}
	out.Error = pe
	if werr := writeJSON(e.stdout, out); werr != nil {
		return werr
	}
	return exitWith(ExitFailure, nil)
}

func sortedStrings(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
