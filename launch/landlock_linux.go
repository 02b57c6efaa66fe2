package launch

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI returns the Landlock ABI version the kernel offers, 0 when
// it offers none (not built in, or disabled at boot).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// landlockRulesetAttr is struct landlock_ruleset_attr as of ABI 6; the
// kernel accepts a shorter struct from an older caller, and this one stops
// at the members that this kernel generation knows.
type landlockRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

type landlockNetPortAttr struct {
	allowed uint64
	port    uint64
}

const landlockRuleNetPort = 2

// Access rights by ABI version.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llV1   = llRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// Rights that apply to a file (not a folder).
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// landlockFSRights is every filesystem right the given ABI handles.
func landlockFSRights(abi int) uint64 {
	r := uint64(llV1)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// landlockPlan is what the second helper stage restricts itself to.
type landlockPlan struct {
	readOnly  []string // read and execute
	readWrite []string // read, write, create, remove; not execute
	network   NetworkMode
	proxyPort int // egress: the one TCP port that may be connected to
}

// landlockResult says what restrictLandlock applied.
type landlockResult struct {
	abi     int
	paths   int      // rules added
	missing []string // paths skipped because they do not exist
	net     bool     // TCP bind and connect are handled
	scoped  bool     // signals and abstract unix sockets are scoped
}

// restrictLandlock restricts the calling thread (and what it executes) to
// plan. no_new_privs must already be set. A path that does not exist is
// skipped and reported; any other failure is an error.
func restrictLandlock(plan landlockPlan) (landlockResult, error) {
	res := landlockResult{abi: landlockABI()}
	if res.abi < 1 {
		return res, errors.New("landlock is not available on this kernel")
	}
	handled := landlockFSRights(res.abi)
	attr := landlockRulesetAttr{handledFS: handled}
	size := unsafe.Sizeof(uint64(0)) // ABI 1-3: handled_access_fs only
	if res.abi >= 4 && plan.network != NetworkLoopback {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		res.net = true
		size = 2 * unsafe.Sizeof(uint64(0))
	}
	if res.abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		res.scoped = true
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return res, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	readRights := uint64(llRead)
	writeRights := handled &^ unix.LANDLOCK_ACCESS_FS_EXECUTE &^
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR &^ unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK &^
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	for _, set := range []struct {
		paths  []string
		rights uint64
	}{{plan.readOnly, readRights}, {plan.readWrite, writeRights}} {
		for _, p := range set.paths {
			added, err := landlockAddPath(ruleset, p, set.rights)
			if err != nil {
				return res, err
			}
			if !added {
				res.missing = append(res.missing, p)
				continue
			}
			res.paths++
		}
	}
	if res.net && plan.network == NetworkEgress && plan.proxyPort > 0 {
		rule := landlockNetPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(plan.proxyPort)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return res, fmt.Errorf("landlock_add_rule (port): %w", errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return res, fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return res, nil
}

// landlockAddPath allows rights beneath path (only the file rights when
// path is a file). It reports false when path does not exist.
func landlockAddPath(ruleset int, path string, rights uint64) (bool, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, nil
		}
		return false, fmt.Errorf("opening %s for a landlock rule: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	// The kernel reads the packed struct (12 bytes); the Go struct has the
	// same layout for its first 12 bytes.
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return false, fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return true, nil
}
