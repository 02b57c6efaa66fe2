//go:build unix

package stdio

import (
	"os/exec"
	"syscall"
)

// isolate puts the child in its own process group, so that stopping it
// reaches every process it started.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func terminate(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGTERM) }
func kill(cmd *exec.Cmd)      { signalGroup(cmd, syscall.SIGKILL) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	// A negative pid signals the whole process group.
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
