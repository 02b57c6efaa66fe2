//go:build linux

package launch

import "golang.org/x/sys/unix"

const (
	seccompArch   = unix.AUDIT_ARCH_AARCH64
	seccompX32Bit = 0 // no x32 on arm64
)

var archDenied []deniedSyscall
