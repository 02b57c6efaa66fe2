// Command mcpseal puts a gate between MCP clients and the servers they run.
package main

import (
	"os"

	"github.com/mcpseal/mcpseal/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
