//go:build linux && (amd64 || arm64)

package launch

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

type deniedSyscall struct {
	nr   int
	name string
}

// commonDenied are the system calls an MCP server never needs: debugging
// and reading other processes, mounting, kernel code and keys, kernel
// interfaces that widen the attack surface, and namespace changes.
var commonDenied = []deniedSyscall{
	{unix.SYS_PTRACE, "ptrace"},
	{unix.SYS_PROCESS_VM_READV, "process_vm_readv"},
	{unix.SYS_PROCESS_VM_WRITEV, "process_vm_writev"},
	{unix.SYS_PIDFD_GETFD, "pidfd_getfd"},
	{unix.SYS_KCMP, "kcmp"},
	{unix.SYS_MOUNT, "mount"},
	{unix.SYS_UMOUNT2, "umount2"},
	{unix.SYS_PIVOT_ROOT, "pivot_root"},
	{unix.SYS_CHROOT, "chroot"},
	{unix.SYS_MOVE_MOUNT, "move_mount"},
	{unix.SYS_OPEN_TREE, "open_tree"},
	{unix.SYS_OPEN_TREE_ATTR, "open_tree_attr"},
	{unix.SYS_FSOPEN, "fsopen"},
	{unix.SYS_FSCONFIG, "fsconfig"},
	{unix.SYS_FSMOUNT, "fsmount"},
	{unix.SYS_FSPICK, "fspick"},
	{unix.SYS_MOUNT_SETATTR, "mount_setattr"},
	{unix.SYS_KEXEC_LOAD, "kexec_load"},
	{unix.SYS_KEXEC_FILE_LOAD, "kexec_file_load"},
	{unix.SYS_INIT_MODULE, "init_module"},
	{unix.SYS_FINIT_MODULE, "finit_module"},
	{unix.SYS_DELETE_MODULE, "delete_module"},
	{unix.SYS_BPF, "bpf"},
	{unix.SYS_PERF_EVENT_OPEN, "perf_event_open"},
	{unix.SYS_KEYCTL, "keyctl"},
	{unix.SYS_ADD_KEY, "add_key"},
	{unix.SYS_REQUEST_KEY, "request_key"},
	{unix.SYS_REBOOT, "reboot"},
	{unix.SYS_SWAPON, "swapon"},
	{unix.SYS_SWAPOFF, "swapoff"},
	{unix.SYS_ACCT, "acct"},
	{unix.SYS_UNSHARE, "unshare"},
	{unix.SYS_SETNS, "setns"},
	{unix.SYS_OPEN_BY_HANDLE_AT, "open_by_handle_at"},
	{unix.SYS_NAME_TO_HANDLE_AT, "name_to_handle_at"},
	{unix.SYS_USERFAULTFD, "userfaultfd"},
	{unix.SYS_FANOTIFY_INIT, "fanotify_init"},
	{unix.SYS_SETTIMEOFDAY, "settimeofday"},
	{unix.SYS_CLOCK_SETTIME, "clock_settime"},
	{unix.SYS_CLOCK_ADJTIME, "clock_adjtime"},
	{unix.SYS_ADJTIMEX, "adjtimex"},
	{unix.SYS_SETHOSTNAME, "sethostname"},
	{unix.SYS_SETDOMAINNAME, "setdomainname"},
	{unix.SYS_SYSLOG, "syslog"},
	{unix.SYS_QUOTACTL, "quotactl"},
	{unix.SYS_QUOTACTL_FD, "quotactl_fd"},
	{unix.SYS_LOOKUP_DCOOKIE, "lookup_dcookie"},
	{unix.SYS_VHANGUP, "vhangup"},
	{unix.SYS_LSM_SET_SELF_ATTR, "lsm_set_self_attr"},
}

// enosysSyscalls fail with ENOSYS, silently: programs probe for them and
// fall back. clone3 passes its flags in memory a filter cannot read, so it
// is refused and libc falls back to clone, whose flags the filter checks;
// io_uring runs operations outside the system call path.
var enosysSyscalls = []deniedSyscall{
	{unix.SYS_CLONE3, "clone3"},
	{unix.SYS_IO_URING_SETUP, "io_uring_setup"},
	{unix.SYS_IO_URING_ENTER, "io_uring_enter"},
	{unix.SYS_IO_URING_REGISTER, "io_uring_register"},
}

// cloneNamespaceFlags are the clone flags that create namespaces.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// allowedSocketDomains are the socket families a server may create. The
// others reach past the network namespace (AF_UNIX pathname sockets such
// as a docker or ssh-agent socket, AF_VSOCK to the hypervisor) or the
// hardware. socketpair is not affected.
var allowedSocketDomains = []uint32{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

func seccompSupported() bool {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
}

// syscallName names a system call number for reports.
func syscallName(nr int32) string {
	for _, set := range [][]deniedSyscall{commonDenied, archDenied, enosysSyscalls} {
		for _, d := range set {
			if int32(d.nr) == nr {
				return d.name
			}
		}
	}
	switch int(nr) {
	case unix.SYS_CLONE:
		return "clone (new namespace)"
	case unix.SYS_SOCKET:
		return "socket (family outside inet, inet6, netlink)"
	}
	return fmt.Sprintf("syscall %d", nr)
}

// installSeccomp installs the filter on the calling thread; what the
// thread executes inherits it. With notify, a denied call waits for the
// supervisor holding the returned listener, which answers EPERM and
// reports it; without, it fails with EPERM at once. no_new_privs must
// already be set. It returns the listener (-1 without notify) and the
// number of system calls denied.
func installSeccomp(notify bool) (listener, denied int, err error) {
	action := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	flags := uintptr(0)
	if notify {
		action = unix.SECCOMP_RET_USER_NOTIF
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	prog, err := seccompProgram(action)
	if err != nil {
		return -1, 0, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, 0, fmt.Errorf("seccomp: %w", errno)
	}
	listener = -1
	if notify {
		listener = int(r)
	}
	return listener, len(commonDenied) + len(archDenied) + len(enosysSyscalls) + 2, nil
}

// Classic BPF opcodes.
const (
	bpfLdAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K
	offNr     = 0  // struct seccomp_data: int nr
	offArch   = 4  // __u32 arch
	offArg0Lo = 16 // __u64 args[0], low half (little-endian)
)

// asm is a tiny assembler with forward labels for jump targets.
type asm struct {
	prog   []unix.SockFilter
	fixups []fixup
	labels map[string]int
}

type fixup struct {
	at     int
	jt, jf string // label names; "" means the next instruction
}

func (a *asm) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.prog), jt: jt, jf: jf})
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) label(name string) { a.labels[name] = len(a.prog) }

func (a *asm) resolve() error {
	off := func(at int, name string) (uint8, error) {
		if name == "" {
			return 0, nil
		}
		target, ok := a.labels[name]
		d := target - at - 1
		if !ok || d < 0 || d > 255 {
			return 0, errors.New("seccomp: jump out of range")
		}
		return uint8(d), nil
	}
	for _, f := range a.fixups {
		jt, err := off(f.at, f.jt)
		if err != nil {
			return err
		}
		jf, err := off(f.at, f.jf)
		if err != nil {
			return err
		}
		a.prog[f.at].Jt, a.prog[f.at].Jf = jt, jf
	}
	return nil
}

// seccompProgram builds the filter: a foreign arch (or x32) kills the
// process; the denied calls get deny; clone3 and io_uring get ENOSYS;
// clone with a namespace flag and socket outside the allowed families
// get deny; everything else is allowed.
func seccompProgram(deny uint32) ([]unix.SockFilter, error) {
	a := &asm{labels: map[string]int{}}
	a.stmt(bpfLdAbs, offArch)
	a.jump(bpfJeq, seccompArch, "arch-ok", "")
	a.stmt(bpfRet, unix.SECCOMP_RET_KILL_PROCESS)
	a.label("arch-ok")
	a.stmt(bpfLdAbs, offNr)
	if seccompX32Bit != 0 {
		a.jump(bpfJge, seccompX32Bit, "", "native")
		a.stmt(bpfRet, unix.SECCOMP_RET_KILL_PROCESS)
		a.label("native")
	}
	for _, set := range [][]deniedSyscall{commonDenied, archDenied} {
		for _, d := range set {
			a.jump(bpfJeq, uint32(d.nr), "deny", "")
		}
	}
	for _, d := range enosysSyscalls {
		a.jump(bpfJeq, uint32(d.nr), "enosys", "")
	}
	a.jump(bpfJeq, unix.SYS_CLONE, "clone", "")
	a.jump(bpfJeq, unix.SYS_SOCKET, "socket", "")
	a.label("allow")
	a.stmt(bpfRet, unix.SECCOMP_RET_ALLOW)
	a.label("deny")
	a.stmt(bpfRet, deny)
	a.label("enosys")
	a.stmt(bpfRet, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	a.label("clone")
	a.stmt(bpfLdAbs, offArg0Lo)
	a.jump(bpfJset, cloneNamespaceFlags, "", "allow2")
	a.stmt(bpfRet, deny)
	a.label("allow2")
	a.stmt(bpfRet, unix.SECCOMP_RET_ALLOW)
	a.label("socket")
	a.stmt(bpfLdAbs, offArg0Lo)
	for _, fam := range allowedSocketDomains {
		a.jump(bpfJeq, fam, "allow3", "")
	}
	a.stmt(bpfRet, deny)
	a.label("allow3")
	a.stmt(bpfRet, unix.SECCOMP_RET_ALLOW)
	if err := a.resolve(); err != nil {
		return nil, err
	}
	return a.prog, nil
}
