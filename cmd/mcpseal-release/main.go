// Command mcpseal-release builds a signed, reproducible mcpseal release:
// what scripts/release runs (internal/releasebuild).
package main

import (
	"os"

	"github.com/mcpseal/mcpseal/internal/releasebuild"
)

func main() {
	os.Exit(releasebuild.Main(os.Args[1:], os.Stderr))
}
