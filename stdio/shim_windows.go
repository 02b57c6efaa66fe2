package stdio

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/mcpseal/mcpseal/launch/winshim"
)

// lookPath finds a server command the way Windows does (package winshim:
// PATHEXT, PATH, never the current folder).
func lookPath(name string) (string, error) {
	return winshim.Resolve(name, os.Getenv("PATH"), os.Getenv("PATHEXT"), func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	})
}

// prepareShim makes a .cmd or .bat server (npx.cmd, uvx.cmd) run under
// cmd.exe with a command line that passes every argument as written;
// other executables are started directly.
func prepareShim(cmd *exec.Cmd) error {
	if !winshim.IsBatch(cmd.Path) {
		return nil
	}
	cmdExe := winshim.CmdExe(os.Getenv("SystemRoot"))
	line, err := winshim.BatchCommandLine(cmdExe, cmd.Path, cmd.Args[1:])
	if err != nil {
		return fmt.Errorf("cannot start server: %w", err)
	}
	cmd.Path = cmdExe
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CmdLine = line
	return nil
}
