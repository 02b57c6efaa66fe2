package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/wire"
)

func init() { register(newPolicyCmd) }

type policyFlags struct {
	config  string
	lock    string
	out     string
	mcpseal string
	npx     string
}

func newPolicyCmd(e *env) *cobra.Command {
	var f policyFlags
	cmd := &cobra.Command{
		Use:   "policy <claude-code|vscode|codex|cursor|all> --config approved.json [--lock ABSOLUTE_PATH] [--out DIR]",
		Short: "Write admin policies that allow only the approved servers, through mcpseal",
		Long: `Policy writes, for each product, the managed-configuration files that allow
only the exact wrapped launch lines of the approved servers and deny their
unwrapped originals (docs/admin-policy.md):

  claude-code  managed-mcp.json (the fixed set) and managed-settings.json
               (allowedMcpServers, deniedMcpServers, allowManagedMcpServersOnly)
  vscode       managed-settings.json for GitHub Copilot in VS Code, Copilot
               CLI and the Copilot app (allowedMcpServers, deniedMcpServers)
  codex        requirements.toml (mcp_servers identities) and the matching
               config.toml
  cursor       cursor-dashboard.txt, text for the team dashboard

approved.json lists the servers in the mcpServers shape. Environment
variables are forwarded by name only; their values are never written, and a
remote server with headers is refused. --lock must be an absolute path: the
policy runs on other machines. The launch lines name this mcpseal's path,
or --mcpseal PATH when the managed machines keep it elsewhere, or with
--npx VERSION run it as "npx -y mcpseal@VERSION run ..." (an exact version:
the launcher checks its binary's SHA-256). Nothing is installed: deploy the
files with your device management.`,
		Example: `  mcpseal policy all --config approved.json --lock /etc/mcpseal/mcpseal.lock
  mcpseal policy codex --config approved.json --mcpseal /usr/local/bin/mcpseal --out /tmp/policy
  mcpseal policy claude-code --config approved.json --npx 0.3.0`,
		Args: exactArgs(1, "one product: claude-code, vscode, codex, cursor or all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPolicy(e, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the approved servers (`FILE`, mcpServers shape; required)")
	fl.StringVar(&f.lock, "lock", "", "the organisation's lock on the managed machines (absolute `PATH`)")
	fl.StringVar(&f.out, "out", "mcpseal-policy", "write the files under `DIR`/<product>/")
	fl.StringVar(&f.mcpseal, "mcpseal", "", "mcpseal's absolute `PATH` on the managed machines (default: this binary)")
	fl.StringVar(&f.npx, "npx", "", "launch mcpseal as 'npx -y mcpseal@`VERSION`' instead of a binary path")
	return cmd
}

func runPolicy(e *env, product string, f policyFlags) error {
	products := []string{product}
	if product == "all" {
		products = wire.Products
	} else if !slices.Contains(wire.Products, product) {
		return &usageError{withHint(fmt.Errorf("unknown product %q", product), "use claude-code, vscode, codex, cursor or all")}
	}
	if f.config == "" {
		return &usageError{withHint(errors.New("policy needs --config approved.json"), "list the approved servers in the mcpServers shape")}
	}
	if f.lock != "" && !filepath.IsAbs(f.lock) {
		return &usageError{fmt.Errorf("--lock %w", wire.ErrRelativePath)}
	}
	self := f.mcpseal
	if f.npx != "" {
		if self != "" {
			return &usageError{errors.New("--npx and --mcpseal name two launchers: give one")}
		}
	} else if self == "" {
		p, err := selfPath()
		if err != nil {
			return err
		}
		self = p
	} else if !filepath.IsAbs(self) {
		return &usageError{fmt.Errorf("--mcpseal %w", wire.ErrRelativePath)}
	}
	approved, err := wire.ReadApproved(f.config)
	if err != nil {
		return err
	}
	o := wire.PolicyOptions{Self: self, Lock: f.lock, NPX: f.npx}
	for _, p := range products {
		files, err := wire.Policies(p, approved, o)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			path := filepath.Join(f.out, p, n)
			if err := wire.WritePolicyFile(path, files[n]); err != nil {
				return fmt.Errorf("writing %s: %w", path, err)
			}
			fmt.Fprintf(e.stdout, "wrote %s\n", path)
		}
	}
	var envs []string
	for _, a := range approved {
		envs = append(envs, a.EnvNames...)
	}
	if len(envs) > 0 {
		slices.Sort(envs)
		fmt.Fprintf(e.stdout, "forwarded by name only (set them on each machine): %s\n", oneLine(fmt.Sprint(slices.Compact(envs))))
	}
	fmt.Fprintln(e.stdout, "deploy the files with your device management; see docs/admin-policy.md for where each goes")
	return nil
}
