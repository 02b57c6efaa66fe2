//go:build !unix

package policy

import "os/exec"

// killGroup keeps exec's default cancellation (kill the process): this
// system has no process groups to kill at once.
func killGroup(*exec.Cmd) {}
