//go:build !windows

package stdio

import "os/exec"

// lookPath finds a server command on PATH.
func lookPath(name string) (string, error) { return exec.LookPath(name) }

// prepareShim has nothing to do outside Windows: a script with a #! line
// is started directly by the kernel.
func prepareShim(cmd *exec.Cmd) error { return nil }
