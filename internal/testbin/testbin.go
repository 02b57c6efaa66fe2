// Package testbin builds mcpseal for tests that need the real binary
// beside them — as the sandbox helper, which a race-instrumented test
// binary cannot be (see launch.SetHelper).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Mcpseal builds ./cmd/mcpseal, without the race detector, into dir (which
// must be searchable by a sandboxed process) and returns its path.
func Mcpseal(dir string) (string, error) {
	path := filepath.Join(dir, "mcpseal")
	cmd := exec.Command("go", "build", "-o", path, "github.com/mcpseal/mcpseal/cmd/mcpseal")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building mcpseal: %v\n%s", err, out)
	}
	return path, nil
}
