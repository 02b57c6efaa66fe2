// Package cli holds mcpseal's subcommands: one file per command, each a
// function that returns an error. Flag parsing and wiring live here; the
// logic lives in the packages the commands call.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// Exit statuses shared by every command. They are documented in
// docs/error-codes.md and never change meaning.
const (
	ExitOK       = 0
	ExitFailure  = 1 // the command failed, or a check it ran found differences
	ExitUsage    = 2 // bad flags or arguments
	ExitBlocked  = 3 // run: the session was blocked because the contract drifted
	ExitHeld     = 4 // run: the pin store is missing, unreadable or tampered
	ExitServer   = 5 // run: the server exited or crashed before the client was done
	ExitVerify   = 6 // run: the contract could not be verified (timeout, invalid definitions, listing failed)
	ExitRefused  = 7 // run: refused to start the server (the lock or the launch profile refused it)
	ExitFailed   = 8 // run: a gate step failed (a bug); the session was closed fail-closed
	ExitInternal = 70
)

// exitError carries an exit status through cobra's error return.
type exitError struct {
	code int
	err  error // may be nil: the command already reported
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitWith returns an error that makes Main exit with code. A nil err means
// the command has already printed what the user needs.
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// hintError is an error with a follow-up hint line.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, format string, args ...any) error {
	return &hintError{err: err, hint: fmt.Sprintf(format, args...)}
}

// env is what every command may touch of the outside world.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// withHome returns e with MCPSEAL_HOME read as home, for a command given
// --home: the state folder then comes from the launch line, whatever
// environment the client passed. An empty home returns e unchanged.
func (e *env) withHome(home string) (*env, error) {
	if home == "" {
		return e, nil
	}
	if !filepath.IsAbs(home) {
		return nil, &usageError{errors.New("--home must be an absolute path")}
	}
	home = filepath.Clean(home)
	getenv := e.getenv
	c := *e
	c.getenv = func(k string) string {
		if k == "MCPSEAL_HOME" {
			return home
		}
		return getenv(k)
	}
	return &c, nil
}

// Main runs mcpseal with args and returns the process exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	stopProfile, err := startCPUProfile(e.getenv)
	if err != nil {
		fmt.Fprintf(stderr, "mcpseal: error: %v\n", err)
		return ExitFailure
	}
	defer func() {
		if err := stopProfile(); err != nil {
			fmt.Fprintf(stderr, "mcpseal: error: %s\n", switchError(cpuProfileEnv, err))
		}
	}()
	stopMemProfile, err := startMemProfile(e.getenv)
	if err != nil {
		fmt.Fprintf(stderr, "mcpseal: error: %v\n", err)
		return ExitFailure
	}
	defer func() {
		if err := stopMemProfile(); err != nil {
			fmt.Fprintf(stderr, "mcpseal: error: %s\n", switchError(memProfileEnv, err))
		}
	}()
	root := newRoot(e, args)
	root.SetArgs(args)
	err = root.Execute()
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var xe *exitError
	if errors.As(err, &xe) {
		code = xe.code
		err = xe.err
	}
	var ue *usageError
	if errors.As(err, &ue) {
		code = ExitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpseal: error: %v\n", err)
		var he *hintError
		if errors.As(err, &he) {
			fmt.Fprintf(stderr, "mcpseal: hint: %s\n", he.hint)
		}
	}
	return code
}

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func newRoot(e *env, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpseal",
		Short: "Pin and gate the MCP servers your clients run",
		Long: `mcpseal sits between an MCP client and the servers it runs. It pins each
server's whole contract (tools, prompts, resources, resource templates and
instructions) on first use, checks every later session and every listing
against the pin, and blocks the session when the contract drifts.

Put it in front of a stdio server in a client's config:

    mcpseal run --name NAME -- <original command> <args...>

Try it in ten seconds, with no network:

    mcpseal demo`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{withHint(err, "see 'mcpseal %s --help'", c.Name())}
	})
	// run starts beside every server a client launches, and uses no other
	// command: building the others' flag sets was a sixth of what a run
	// session allocates, and mapped their code (docs/performance.md, issue
	// 12). Its help, flags and errors are the same either way
	// (TestRunAloneIsTheSameCommand).
	if len(args) > 0 && args[0] == "run" {
		root.AddCommand(newRunCmd(e))
		return root
	}
	for _, add := range commands {
		root.AddCommand(add(e))
	}
	return root
}

// commands is filled by each subcommand's file in its init function, so
// that adding a command touches one file.
var commands []func(*env) *cobra.Command

func register(f func(*env) *cobra.Command) { commands = append(commands, f) }

// usageArgs returns a cobra.PositionalArgs that reports a usage error.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{withHint(fmt.Errorf("%s takes %s", cmd.Name(), names), "see 'mcpseal %s --help'", cmd.Name())}
		}
		return nil
	}
}
