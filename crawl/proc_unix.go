//go:build unix

package crawl

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group, so that killGroup ends
// everything the server started.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
