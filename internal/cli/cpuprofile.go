package cli

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime/pprof"

	"github.com/mcpseal/mcpseal/internal/pathclock"
	"github.com/mcpseal/mcpseal/pin"
)

// cpuProfileEnv names the file a CPU profile of this process is written
// to. It is a developer's switch, off unless set, documented in
// docs/performance.md:
//
//	MCPSEAL_CPUPROFILE=/tmp/run.pprof mcpseal run -- server ...
//	go tool pprof -top /tmp/run.pprof
//
// The profile covers the whole process, from Main to its return; a process
// killed before it returns (SIGKILL) leaves an empty or truncated file.
//
// The file must not exist yet: it is created with O_EXCL (mode 0600), so
// the variable, set where a config's env can set it, can never clobber an
// existing file or follow a symlink.
const cpuProfileEnv = "MCPSEAL_CPUPROFILE"

// startCPUProfile starts profiling to the file getenv(cpuProfileEnv) names,
// and returns the function that stops it and closes the file. Unset, it
// does nothing. A file that cannot be created (it exists, its folder does
// not) is an error: someone who asked for a profile should not get a run
// without one.
func startCPUProfile(getenv func(string) string) (stop func() error, err error) {
	path := getenv(cpuProfileEnv)
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := createProfile(cpuProfileEnv, path, getenv)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// memProfileEnv names the file a heap profile of this process is written
// to when Main returns: the allocations of the whole run (go tool pprof
// -sample_index=alloc_space) and what was still live at its end. Like
// cpuProfileEnv it is a developer's switch, off unless set, and the file
// is created with O_EXCL, mode 0600.
const memProfileEnv = "MCPSEAL_MEMPROFILE"

// startMemProfile opens the file getenv(memProfileEnv) names, and returns
// the function that writes the heap profile to it and closes it. Unset, it
// does nothing.
func startMemProfile(getenv func(string) string) (stop func() error, err error) {
	path := getenv(memProfileEnv)
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := createProfile(memProfileEnv, path, getenv)
	if err != nil {
		return nil, err
	}
	return func() error {
		err := pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// createProfile creates the file a profile variable names: a new file
// (O_EXCL, mode 0600), not in, at or above mcpseal's home as the
// environment names it (pathclock.Create: a client config's env block
// could otherwise plant a file there, a policy.json, that every later run
// fails on). `run --home` is parsed after the profile starts, so a home
// named only by the flag is not checked.
func createProfile(name, path string, getenv func(string) string) (*os.File, error) {
	return pathclock.Create(name, path, switchHomes(getenv)...)
}

// switchHomes are the homes a developer's switch may not write a file in,
// at or above: the one getenv names, and the default home of the user
// this process runs as, which the same env block that sets the switch
// cannot move by setting MCPSEAL_HOME or HOME as well. (A home the person
// set in MCPSEAL_HOME, then overridden by the entry, cannot be known.)
func switchHomes(getenv ...func(string) string) []string {
	var homes []string
	for _, g := range getenv {
		if h, err := pin.DefaultHome(g); err == nil {
			homes = append(homes, h)
		}
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		homes = append(homes, filepath.Join(u.HomeDir, ".mcpseal"))
	}
	return homes
}

// switchError is err, from finishing the file a switch named, with the
// file's path quoted: the path came from an env block, and printed raw a
// newline in it could forge a line of mcpseal's own.
func switchError(name string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %q: %s: %v", name, pe.Path, pe.Op, pe.Err)
	}
	return fmt.Sprintf("%s: %v", name, err)
}
