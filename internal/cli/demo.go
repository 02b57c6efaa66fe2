package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/internal/demo"
	"github.com/mcpseal/mcpseal/pin"
)

func init() {
	register(newDemoCmd)
	register(newDemoServerCmd)
}

func newDemoCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Show a rug pull being blocked, in ten seconds, with no network",
		Long: `Demo runs a harmless server bundled in mcpseal through the real gate twice,
in a temporary folder that it removes afterwards. Between the sessions the
server changes its only tool: the description starts asking for the
conversation's notes and credentials, and the schema gains a field to carry
them. The first session pins the tool; the second is blocked and the
labelled diff is shown. No tool is called, nothing touches the network and
your real pins are not touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find the mcpseal binary to run the demo server: %w", err)
			}
			id := pin.IdentityForName("weather-demo")
			r := &reporter{w: e.stdout, id: id}
			return demo.Run(demo.Config{
				Self:   self,
				Out:    e.stdout,
				Report: r.drift,
				Verified: func(profile string, outcome pin.Outcome) {
					if outcome == pin.FirstPin {
						fmt.Fprintf(e.stdout, "   mcpseal: pinned the contract of %s (%s)\n", id.Label, id.ID)
					}
				},
			})
		},
	}
}

func newDemoServerCmd(e *env) *cobra.Command {
	var variant int
	cmd := &cobra.Command{
		Use:    "demo-server",
		Short:  "The harmless stdio MCP server used by 'mcpseal demo'",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if variant != 1 && variant != 2 {
				return &usageError{fmt.Errorf("--variant must be 1 or 2")}
			}
			return demo.Serve(variant, e.stdin, e.stdout)
		},
	}
	cmd.Flags().IntVar(&variant, "variant", 1, "which version of the tool to serve: 1 or 2")
	return cmd
}
