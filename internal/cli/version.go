package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/internal/version"
)

func init() { register(newVersionCmd) }

// versionJSON is the --json form of mcpseal version: the format version,
// then the build's facts (docs/release.md).
type versionJSON struct {
	Version int `json:"version"`
	version.Info
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print mcpseal's version, commit and the module versions built into it",
		Long: `Print the release version and source commit stamped in by scripts/release,
the Go version and platform, and every module compiled into this binary
with its version and go.sum hash (from the build information the Go
toolchain records). A binary not built by scripts/release reports version
"devel".`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := version.Get()
			if asJSON {
				return writeJSON(e.stdout, versionJSON{Version: jsonVersion, Info: in})
			}
			fmt.Fprintln(e.stdout, in.Short())
			for _, m := range in.Modules {
				line := "  " + m.Path + " " + m.Version
				if m.Replace != nil {
					line += " => " + m.Replace.Path + " " + m.Replace.Version
				}
				fmt.Fprintln(e.stdout, line)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (see docs/release.md)")
	return cmd
}
