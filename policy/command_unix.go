//go:build unix

package policy

import (
	"os/exec"
	"syscall"
)

// killGroup starts the command in its own process group and makes
// cancellation kill the whole group, so a provider that forks cannot
// leave a grandchild running past its timeout.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
