package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// DefaultLimits are the limits a proposed profile starts with: enough for
// the reference servers with a wide margin, finite everywhere.
var DefaultLimits = Limits{
	StartupMS:     30_000,
	RequestMS:     300_000,
	StdoutBytes:   256 << 20,
	StderrBytes:   16 << 20,
	MemoryBytes:   2 << 30,
	CPUSeconds:    3600,
	Processes:     64,
	OpenFiles:     1024,
	FileSizeBytes: 1 << 30,
}

// systemReadOnly are the system's libraries and what a dynamically linked
// program reads at start; a proposal lists those that exist here.
var systemReadOnly = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/ssl/openssl.cnf",
	"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib",
	"/usr/share/zoneinfo", "/dev/urandom", "/dev/random",
}

// egressReadOnly are the certificate stores a server needs to speak TLS.
var egressReadOnly = []string{"/etc/ssl", "/etc/ca-certificates", "/usr/share/ca-certificates", "/etc/pki"}

// ProposeOptions is what `mcpseal profile create` asks for.
type ProposeOptions struct {
	Name string
	// Argv is the command as a client config would run it: a program on
	// PATH or a path, an interpreter and a script, npx or uvx and a
	// package (already installed: nothing is downloaded).
	Argv []string
	// Getenv reads PATH, HOME and the package managers' cache variables.
	Getenv func(string) string
	// Dir is the folder relative paths are relative to.
	Dir string
	// Extra policy on top of the conservative defaults.
	ReadOnly, ReadWrite []string
	Pass                []string
	Set                 map[string]string
	Network             Network
}

// Propose resolves a command to what it really executes and proposes a
// profile: the executable and tree with their digests, exact argv, no
// environment, read-only access to the server's own files and the
// system's libraries, no network (unless asked), every confinement
// required, DefaultLimits. The notes say what was resolved and how.
func Propose(o ProposeOptions) (*Profile, []string, error) {
	if len(o.Argv) == 0 {
		return nil, nil, errors.New("no command")
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	r := &resolver{getenv: o.Getenv, dir: o.Dir}
	res, err := r.resolve(o.Argv)
	if err != nil {
		return nil, r.notes, err
	}
	p := &Profile{
		Version:    FormatVersion,
		Name:       o.Name,
		Executable: Executable{Path: res.exe},
		Argv:       res.argv,
		Cwd:        "/",
		Env:        Env{Pass: sortedSet(o.Pass), Set: o.Set},
		Limits:     DefaultLimits,
		Network:    o.Network,
		Require:    slices.Clone(AllConfinements),
	}
	if p.Env.Set == nil {
		p.Env.Set = map[string]string{}
	}
	if p.Network.Mode == "" {
		p.Network.Mode = NetworkNone
	}
	p.Network.Allow = sortedSet(p.Network.Allow)
	exe, err := openNoSymlinks(res.exe, false)
	if err != nil {
		return nil, r.notes, fmt.Errorf("opening %s: %w", res.exe, err)
	}
	p.Executable.SHA256, err = HashExecutable(exe)
	exe.Close()
	if err != nil {
		return nil, r.notes, err
	}
	if res.tree != "" {
		d, st, err := TreeDigest(res.tree)
		if err != nil {
			return nil, r.notes, fmt.Errorf("hashing the package tree %s: %w", res.tree, err)
		}
		p.Tree = &Tree{Path: res.tree, Digest: d}
		p.Cwd = res.tree
		r.note("pinned the package tree %s (%d files)", res.tree, st.Files)
	}
	ro := append(existing(systemReadOnly), res.readOnly...)
	if p.Network.Mode == NetworkEgress {
		ro = append(ro, existing(egressReadOnly)...)
	}
	ro = append(ro, absAll(o.ReadOnly, o.Dir)...)
	rw := append(existing([]string{"/dev/null"}), absAll(o.ReadWrite, o.Dir)...)
	p.Filesystem.ReadWrite = sortedSet(rw)
	p.Filesystem.ReadOnly = slices.DeleteFunc(sortedSet(ro), func(s string) bool { return slices.Contains(p.Filesystem.ReadWrite, s) })
	if err := p.Validate(); err != nil {
		return nil, r.notes, err
	}
	return p, r.notes, nil
}

// resolved is what a command really runs.
type resolved struct {
	exe      string   // the executable, by its real path
	argv     []string // the exact argv it gets
	tree     string   // the package tree, "" for none
	readOnly []string // more it must read (an interpreter's own prefix)
}

type resolver struct {
	getenv func(string) string
	dir    string
	notes  []string
}

func (r *resolver) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *resolver) resolve(argv []string) (*resolved, error) {
	switch filepath.Base(argv[0]) {
	case "npx":
		return r.npx(argv)
	case "uvx":
		return r.uvx(argv)
	}
	path, err := r.lookPath(argv[0])
	if err != nil {
		return nil, err
	}
	return r.program(path, argv)
}

// program resolves a file to run with argv: a #! script is replaced by
// its interpreter, a known interpreter gets its script's package tree.
func (r *resolver) program(path string, argv []string) (*resolved, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if interp, args, ok, err := shebang(real); err != nil {
		return nil, err
	} else if ok {
		return r.script(real, interp, args, argv[1:])
	}
	res := &resolved{exe: real, argv: slices.Clone(argv)}
	if real != path {
		r.note("%s is %s", path, real)
	}
	if isInterpreter(real) {
		if i := scriptArg(argv); i > 0 {
			script, err := filepath.EvalSymlinks(r.abs(argv[i]))
			if err != nil {
				return nil, fmt.Errorf("the script %s: %w", argv[i], err)
			}
			res.argv[i] = script
			res.tree = packageFolder(script)
		} else {
			r.note("no script file in the command line: no package tree is pinned")
		}
		res.readOnly = interpreterPrefix(real)
	}
	return res, nil
}

// script resolves a #! script into its interpreter, argv as the kernel
// would build it, and the script's package tree.
func (r *resolver) script(script, interp string, interpArgs, rest []string) (*resolved, error) {
	if filepath.Base(interp) == "env" {
		if len(interpArgs) == 0 || strings.HasPrefix(interpArgs[0], "-") {
			return nil, fmt.Errorf("%s: an env #! line with options is not supported; run the interpreter explicitly", script)
		}
		interp, interpArgs = interpArgs[0], interpArgs[1:]
	}
	path, err := r.lookPath(interp)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	r.note("%s is a #! script for %s: the interpreter %s is the executable, the script's package folder the tree", script, interp, real)
	argv := append(append(append([]string{interp}, interpArgs...), script), rest...)
	return &resolved{exe: real, argv: argv, tree: packageFolder(script), readOnly: interpreterPrefix(real)}, nil
}

// maxShebang bounds the #! line read (Linux reads at most 256 bytes).
const maxShebang = 256

// shebang reads a #! line: the interpreter and its arguments.
func shebang(path string) (interp string, args []string, ok bool, err error) {
	// Follow: commands on PATH are links more often than not; a FIFO or
	// device in their place is refused without blocking.
	f, err := atomicfile.OpenFollow(path)
	if err != nil {
		return "", nil, false, err
	}
	defer f.Close()
	buf := make([]byte, maxShebang)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", nil, false, err
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", nil, false, nil
	}
	f2 := strings.Fields(rest)
	if len(f2) == 0 {
		return "", nil, false, fmt.Errorf("%s: an empty #! line", path)
	}
	return f2[0], f2[1:], true, nil
}

func isInterpreter(path string) bool {
	base := filepath.Base(path)
	for _, p := range []string{"node", "nodejs", "bun", "deno", "python", "python3", "pypy3"} {
		if base == p || strings.HasPrefix(base, p+".") {
			return true
		}
	}
	return strings.HasPrefix(base, "python3.")
}

// scriptArg is the index of the script in an interpreter's argv: the
// first argument that is not an option. Python's -m and -c run no file.
func scriptArg(argv []string) int {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-m" || a == "-c" || a == "-e" || a == "--eval":
			return 0
		case a == "--":
			if i+1 < len(argv) {
				return i + 1
			}
			return 0
		case !strings.HasPrefix(a, "-"):
			return i
		}
	}
	return 0
}

// packageFolder is the tree a script runs: the outermost node_modules
// folder above it (which holds every dependency npm hoisted), else the
// nearest folder above it with a package manifest or a pyvenv.cfg, else
// its own folder.
func packageFolder(script string) string {
	dir := filepath.Dir(script)
	parts := strings.Split(dir, string(filepath.Separator))
	for i, part := range parts {
		if part == "node_modules" && i > 0 {
			return strings.Join(parts[:i+1], string(filepath.Separator))
		}
	}
	for d, n := dir, 0; n < 8 && d != filepath.Dir(d); d, n = filepath.Dir(d), n+1 {
		for _, marker := range []string{"package.json", "pyproject.toml", "setup.py", "pyvenv.cfg"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
	}
	return dir
}

// interpreterPrefix is what an interpreter outside the system folders
// must read of its own installation (a uv-managed Python's lib folder).
func interpreterPrefix(exe string) []string {
	prefix := filepath.Dir(filepath.Dir(exe))
	for _, sys := range []string{"/", "/usr", "/usr/local", "/bin"} {
		if prefix == sys {
			return nil
		}
	}
	return []string{prefix}
}

func (r *resolver) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.dir, p)
}

// lookPath finds a program the way a shell would, without running one.
func (r *resolver) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		p := r.abs(name)
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", p)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(r.getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry depends on the folder mcpseal runs in
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH", name)
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}

func absAll(paths []string, dir string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
