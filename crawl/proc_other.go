//go:build !unix

package crawl

import "os/exec"

// ownGroup has no process groups to use outside Unix.
func ownGroup(cmd *exec.Cmd) {}

// killGroup ends the server itself; what it started may outlive it.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
