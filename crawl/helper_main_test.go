package crawl

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testbin"
	"github.com/mcpseal/mcpseal/launch"
)

// TestMain makes a plain build of mcpseal the sandbox helper, as in
// production: under -race this test binary needs more memory than the
// sandbox's limits allow (see launch.SetHelper).
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpseal-helper-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The sandbox reads the helper: the folder must be searchable.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	helper, err := testbin.Mcpseal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	launch.SetHelper(helper)
	return m.Run()
}
