//go:build !linux

package launch

import (
	"errors"
	"io"
	"os"
)

// HelperCommand is the argument that selects the helper.
const HelperCommand = "sandbox-init"

// errNotLinux refuses every launch: the verified launch executes the
// hashed descriptor, and the sandbox is made of Linux namespaces,
// Landlock and seccomp. Elsewhere nothing is pretended.
var errNotLinux = errors.New("launch profiles run servers on Linux only: the verified launch and the sandbox need Linux")

// HelperMain refuses outside Linux.
func HelperMain(args []string) int { return 125 }

// SetHelper has no effect outside Linux: there is no sandbox helper.
func SetHelper(path string) {}

// Server is a launched server; outside Linux none is ever returned.
type Server struct{}

func (s *Server) Stdin() io.WriteCloser { return nil }
func (s *Server) Stdout() io.Reader     { return nil }
func (s *Server) Stderr() io.Reader     { return nil }
func (s *Server) Wait() error           { return errNotLinux }
func (s *Server) Terminate()            {}
func (s *Server) Kill()                 {}

func endedUnreported(error) bool { return false }

func startSandbox(p *Profile, v *verified, env []string, events func(Event), rep *Report, probe bool) (*Server, error) {
	for _, c := range AllConfinements {
		rep.NotEnforced = append(rep.NotEnforced, Enforcement{Confinement: c, Detail: "not available outside Linux"})
	}
	return nil, errNotLinux
}

func openNoSymlinks(path string, dir bool) (*os.File, error) {
	return nil, errNotLinux
}
