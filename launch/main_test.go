package launch

import (
	"fmt"
	"github.com/mcpseal/mcpseal/internal/testbin"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// hostileBin is the hostile test server, built by TestMain.
var hostileBin string

func TestMain(m *testing.M) {
	// The sandbox's helper is this binary, started again (helperExe is
	// /proc/self/exe): run it instead of the tests.
	if len(os.Args) > 1 && os.Args[1] == HelperCommand {
		os.Exit(HelperMain(os.Args[2:]))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpseal-launch-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The sandbox reads the executable: the folder must be searchable.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hostileBin = filepath.Join(dir, "hostile")
	cmd := exec.Command("go", "build", "-o", hostileBin, "github.com/mcpseal/mcpseal/internal/testmcp/cmd/hostile")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the hostile server: %v\n%s", err, out)
		return 1
	}
	// The helper is a plain build of mcpseal, as in production: under
	// -race this test binary needs more memory than the sandbox allows.
	helper, err := testbin.Mcpseal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	SetHelper(helper)
	return m.Run()
}
