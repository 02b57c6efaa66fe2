// Command testserver plays a testmcp scenario on stdio: it loads the
// Scenario from the JSON file named by its first argument and serves
// newline-delimited JSON-RPC on stdin and stdout.
//
//	testserver scenario.json
//
// Exit status: 0 at end of input, 1 when the scenario crashes on purpose
// (crashOnCall), 2 on any other error.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: testserver SCENARIO.json")
		os.Exit(2)
	}
	sc, err := testmcp.LoadScenario(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = testmcp.Serve(ctx, sc, os.Stdin, os.Stdout)
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		os.Exit(0)
	case errors.Is(err, testmcp.ErrCrash):
		fmt.Fprintln(os.Stderr, "testserver: crashing on purpose")
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(2)
	}
}
