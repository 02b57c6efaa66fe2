package launch

import (
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Confinement is one kind of protection a launch can enforce. A profile
// lists the ones it requires.
type Confinement string

const (
	// ConfineFilesystem: only the profile's paths can be read or written
	// (Landlock).
	ConfineFilesystem Confinement = "filesystem"
	// ConfineLimits: memory, CPU time, open files and file size are
	// bounded per process (rlimits).
	ConfineLimits Confinement = "limits"
	// ConfineNamespaces: user, mount, PID, IPC and UTS namespaces of its
	// own; nothing of the sandbox outlives its init.
	ConfineNamespaces Confinement = "namespaces"
	// ConfineNetwork: the network policy, by a network namespace of its own.
	ConfineNetwork Confinement = "network"
	// ConfineNoNewPrivs: no_new_privs, and no capabilities.
	ConfineNoNewPrivs Confinement = "no-new-privs"
	// ConfineProcesses: the number of tasks is bounded (RLIMIT_NPROC, or a
	// pids cgroup where the rlimit does not bind).
	ConfineProcesses Confinement = "processes"
	// ConfineSyscalls: a seccomp filter denies the system calls MCP servers
	// never need (ptrace, mount, bpf, keyctl, kexec...).
	ConfineSyscalls Confinement = "syscalls"
)

// AllConfinements lists every confinement, sorted.
var AllConfinements = []Confinement{
	ConfineFilesystem, ConfineLimits, ConfineNamespaces, ConfineNetwork,
	ConfineNoNewPrivs, ConfineProcesses, ConfineSyscalls,
}

// Bounds on a profile's contents. A profile is host-owned, but it is still
// read from disk: every list and string is bounded.
const (
	maxPathLen   = 4096
	maxPaths     = 256
	maxArgs      = 1024
	maxArgLen    = 128 << 10
	maxArgvBytes = 512 << 10
	maxEnvVars   = 256
	maxEnvValue  = 32 << 10
	maxAllow     = 256
	maxNameLen   = 64
)

// Upper bounds of the limits: generous, but finite.
var limitMax = Limits{
	StartupMS:     10 * 60 * 1000,
	RequestMS:     24 * 60 * 60 * 1000,
	StdoutBytes:   1 << 40,
	StderrBytes:   1 << 32,
	MemoryBytes:   1 << 40,
	CPUSeconds:    1 << 20,
	Processes:     1 << 16,
	OpenFiles:     1 << 20,
	FileSizeBytes: 1 << 40,
}

// Validate checks every rule of the format except canonical encoding.
func (p *Profile) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrProfile, fmt.Sprintf(format, args...))
	}
	if p.Version != FormatVersion {
		return bad("version must be %d", FormatVersion)
	}
	if !ValidName(p.Name) {
		return bad("name must be 1 to %d lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", maxNameLen)
	}
	if err := checkPath(p.Executable.Path); err != nil || p.Executable.Path == "/" {
		return bad("executable.path must be an absolute, clean path")
	}
	if !validSHA256(p.Executable.SHA256) {
		return bad("executable.sha256 must be \"sha256:\" and 64 lowercase hex digits")
	}
	if p.Tree != nil {
		if checkPath(p.Tree.Path) != nil {
			return bad("tree.path must be an absolute, clean path")
		}
		if !validH1(p.Tree.Digest) {
			return bad("tree.digest must be an h1: directory digest")
		}
	}
	if err := checkArgv(p.Argv); err != nil {
		return bad("%v", err)
	}
	if checkPath(p.Cwd) != nil {
		return bad("cwd must be an absolute, clean path")
	}
	if err := checkEnv(p.Env, p.Network.Mode); err != nil {
		return bad("%v", err)
	}
	if err := checkLimits(p.Limits); err != nil {
		return bad("%v", err)
	}
	if err := checkPathSet("filesystem.read_only", p.Filesystem.ReadOnly); err != nil {
		return bad("%v", err)
	}
	if err := checkPathSet("filesystem.read_write", p.Filesystem.ReadWrite); err != nil {
		return bad("%v", err)
	}
	for _, rw := range p.Filesystem.ReadWrite {
		if slices.Contains(p.Filesystem.ReadOnly, rw) {
			return bad("a path is both read-only and read-write")
		}
	}
	if err := checkNetwork(p.Network); err != nil {
		return bad("%v", err)
	}
	if !sortedUnique(p.Require) {
		return bad("require must be sorted, without repeats")
	}
	for _, c := range p.Require {
		if !slices.Contains(AllConfinements, c) {
			return bad("require names an unknown confinement")
		}
	}
	return nil
}

// ValidName reports whether name can name a profile (and its file).
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func checkPath(p string) error {
	if p == "" || len(p) > maxPathLen || !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("not an absolute, clean path")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] == 0x7f {
			return fmt.Errorf("control character in a path")
		}
	}
	return nil
}

func checkPathSet(what string, paths []string) error {
	if len(paths) > maxPaths {
		return fmt.Errorf("%s lists more than %d paths", what, maxPaths)
	}
	for _, p := range paths {
		if checkPath(p) != nil {
			return fmt.Errorf("%s holds a path that is not absolute and clean", what)
		}
	}
	if !sortedUnique(paths) {
		return fmt.Errorf("%s must be sorted, without repeats", what)
	}
	return nil
}

func checkArgv(argv []string) error {
	if len(argv) == 0 || len(argv) > maxArgs {
		return fmt.Errorf("argv must hold 1 to %d arguments", maxArgs)
	}
	total := 0
	for _, a := range argv {
		if len(a) > maxArgLen || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("an argument is longer than %d bytes or holds a NUL byte", maxArgLen)
		}
		total += len(a) + 1
	}
	if argv[0] == "" {
		return fmt.Errorf("argv[0] is empty")
	}
	if total > maxArgvBytes {
		return fmt.Errorf("argv is longer than %d bytes", maxArgvBytes)
	}
	return nil
}

// proxyEnv are the variables egress mode sets itself.
var proxyEnv = []string{"HTTPS_PROXY", "HTTP_PROXY", "NODE_USE_ENV_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

func checkEnv(e Env, mode NetworkMode) error {
	if len(e.Pass)+len(e.Set) > maxEnvVars {
		return fmt.Errorf("env names more than %d variables", maxEnvVars)
	}
	if !sortedUnique(e.Pass) {
		return fmt.Errorf("env.pass must be sorted, without repeats")
	}
	for _, n := range e.Pass {
		if !validEnvName(n) {
			return fmt.Errorf("env.pass holds an invalid variable name")
		}
		if _, ok := e.Set[n]; ok {
			return fmt.Errorf("a variable is both passed and set")
		}
	}
	for n, v := range e.Set {
		if !validEnvName(n) {
			return fmt.Errorf("env.set holds an invalid variable name")
		}
		if len(v) > maxEnvValue || strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("an env.set value is longer than %d bytes or holds a NUL byte", maxEnvValue)
		}
	}
	if mode == NetworkEgress {
		for _, n := range proxyEnv {
			_, set := e.Set[n]
			if set || slices.Contains(e.Pass, n) {
				return fmt.Errorf("egress mode sets the proxy variables itself; env may not name %s", n)
			}
		}
	}
	return nil
}

func validEnvName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func checkLimits(l Limits) error {
	for _, f := range limitFields(&l, &limitMax) {
		if *f.v <= 0 || *f.v > *f.max {
			return fmt.Errorf("limits.%s must be between 1 and %d", f.name, *f.max)
		}
	}
	return nil
}

type limitField struct {
	name   string
	v, max *int64
}

func limitFields(l, m *Limits) []limitField {
	return []limitField{
		{"startup_ms", &l.StartupMS, &m.StartupMS},
		{"request_ms", &l.RequestMS, &m.RequestMS},
		{"stdout_bytes", &l.StdoutBytes, &m.StdoutBytes},
		{"stderr_bytes", &l.StderrBytes, &m.StderrBytes},
		{"memory_bytes", &l.MemoryBytes, &m.MemoryBytes},
		{"cpu_seconds", &l.CPUSeconds, &m.CPUSeconds},
		{"processes", &l.Processes, &m.Processes},
		{"open_files", &l.OpenFiles, &m.OpenFiles},
		{"file_size_bytes", &l.FileSizeBytes, &m.FileSizeBytes},
	}
}

func checkNetwork(n Network) error {
	switch n.Mode {
	case NetworkNone, NetworkLoopback:
		if len(n.Allow) > 0 {
			return fmt.Errorf("network.allow is only for egress mode")
		}
	case NetworkEgress:
		if len(n.Allow) == 0 || len(n.Allow) > maxAllow {
			return fmt.Errorf("egress mode needs 1 to %d network.allow entries", maxAllow)
		}
	default:
		return fmt.Errorf("network.mode must be none, loopback or egress")
	}
	for _, a := range n.Allow {
		if _, _, err := ParseHostPort(a); err != nil {
			return fmt.Errorf("network.allow: %v", err)
		}
	}
	if !sortedUnique(n.Allow) {
		return fmt.Errorf("network.allow must be sorted, without repeats")
	}
	return nil
}

// ParseHostPort reads an egress allowlist entry: a lowercase DNS name, an
// IPv4 address or a bracketed IPv6 address, a colon and a port. IP
// literals are returned in their canonical text form; an entry not already
// in that form is refused.
func ParseHostPort(s string) (host string, port int, err error) {
	h, ps, err := net.SplitHostPort(s)
	if err != nil || h == "" {
		return "", 0, fmt.Errorf("an entry is not host:port")
	}
	port, err = strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != ps {
		return "", 0, fmt.Errorf("an entry's port is not 1 to 65535")
	}
	if ip := net.ParseIP(h); ip != nil {
		if net.JoinHostPort(ip.String(), ps) != s {
			return "", 0, fmt.Errorf("an IP entry is not in canonical form")
		}
		return ip.String(), port, nil
	}
	if !validHostname(h) {
		return "", 0, fmt.Errorf("an entry's host is not a lowercase DNS name")
	}
	return h, port, nil
}

func validHostname(h string) bool {
	if len(h) > 253 || strings.HasSuffix(h, ".") {
		return false
	}
	labels := strings.Split(h, ".")
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		// "127.1" or "2130706433": some resolvers read these as addresses.
		return false
	}
	for _, label := range labels {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validSHA256(s string) bool {
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func validH1(s string) bool {
	b64, ok := strings.CutPrefix(s, "h1:")
	if !ok {
		return false
	}
	sum, err := base64.StdEncoding.Strict().DecodeString(b64)
	return err == nil && len(sum) == 32 && base64.StdEncoding.EncodeToString(sum) == b64
}

func sortedUnique[T ~string](s []T) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}
