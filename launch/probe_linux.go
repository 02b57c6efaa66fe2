package launch

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelInfo is what this kernel offers the sandbox, probed without
// starting anything.
type kernelInfo struct {
	release  string
	landlock int  // Landlock ABI, 0 for none
	seccomp  bool // seccomp filters
	notify   bool // seccomp user notification (denials reported)
	// userNS: user namespaces are not switched off
	// (/proc/sys/user/max_user_namespaces); only a launch proves they work.
	userNS bool
	// nprocPerNS: RLIMIT_NPROC counts the tasks of a user namespace
	// separately (Linux 5.14 and later), so it can bound the sandbox.
	nprocPerNS bool
	root       bool // euid 0: RLIMIT_NPROC does not bind root's processes
}

func probeKernel() kernelInfo {
	k := kernelInfo{landlock: landlockABI(), seccomp: seccompSupported(), root: os.Geteuid() == 0}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		k.release = unix.ByteSliceToString(u.Release[:])
		k.nprocPerNS = atLeast(k.release, 5, 14)
	}
	if k.seccomp {
		action := uint32(unix.SECCOMP_RET_USER_NOTIF)
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		k.notify = errno == 0
	}
	k.userNS = true
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n == 0 {
			k.userNS = false
		}
	}
	return k
}

// atLeast reports whether a kernel release ("6.18.44-fc") is at least
// major.minor.
func atLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	digits := parts[1]
	if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = digits[:i]
	}
	mi, err2 := strconv.Atoi(digits)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
