//go:build linux

package launch

import "golang.org/x/sys/unix"

const (
	seccompArch = unix.AUDIT_ARCH_X86_64
	// x32 system calls share the x86-64 audit arch and set this bit; the
	// filter refuses them all.
	seccompX32Bit = 0x40000000
)

// archDenied are the denied system calls that exist only on this arch.
var archDenied = []deniedSyscall{
	{unix.SYS_IOPL, "iopl"},
	{unix.SYS_IOPERM, "ioperm"},
	{unix.SYS_USELIB, "uselib"},
}
