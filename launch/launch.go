// Package launch starts a stdio MCP server exactly as a host-owned launch
// profile pins it, and confines it in a Linux sandbox.
//
// # Profiles
//
// A profile (docs/launch-profiles.md) pins the absolute executable and
// the SHA-256 of its bytes, the package tree the executable runs (an
// "h1:" directory digest), the exact argv, the working folder, the
// environment (empty unless named), limits, a filesystem policy, a network
// policy, and which confinements are required. Its digest, "sha256:" over
// its RFC 8785 canonical form, is part of the server's identity: a changed
// profile is a changed server.
//
//	{"version":1,"name":"memory",
//	 "executable":{"path":"/usr/bin/node","sha256":"sha256:3f1c…"},
//	 "tree":{"path":"/home/me/.npm/_npx/9e1f/node_modules","digest":"h1:Qm…"},
//	 "argv":["node","/home/me/.npm/_npx/9e1f/node_modules/@modelcontextprotocol/server-memory/dist/index.js"],
//	 "cwd":"/home/me/.npm/_npx/9e1f/node_modules",
//	 "env":{"pass":[],"set":{"MEMORY_FILE_PATH":"/home/me/mem/memory.jsonl"}},
//	 "limits":{"startup_ms":30000,"request_ms":300000,…},
//	 "filesystem":{"read_only":["/usr/lib"],"read_write":["/home/me/mem"]},
//	 "network":{"mode":"none","allow":[]},
//	 "require":["filesystem","limits","namespaces","network","no-new-privs","processes","syscalls"]}
//
// # Verified launch
//
// [Start] refuses unless the command line and working folder asked for
// equal the profile's. It opens the executable without following any
// symbolic link, hashes that open descriptor, verifies the tree, and only
// then resolves the environment. The descriptor that was hashed is the one
// executed (execveat with AT_EMPTY_PATH), so the file cannot be swapped
// between the check and the exec; a path that no longer names the hashed
// file refuses the launch. A "#!" script is refused: its interpreter would
// open the script again by path. Pin the interpreter as the executable and
// the script's package folder as the tree. No shell is involved, ever.
//
// # The sandbox
//
// mcpseal re-executes itself as the sandbox's init ("mcpseal sandbox-init"),
// in new user, mount, PID, IPC, UTS and network namespaces. The init mounts
// a /proc of its own, brings up lo for loopback and egress, and starts a
// second helper stage that applies rlimits, no_new_privs, an empty
// capability set, Landlock and a seccomp filter to itself before it
// executes the verified descriptor. The init stays PID 1: it forwards
// SIGTERM, reaps, and when the server exits it kills whatever the server
// left behind; when the init dies, the kernel kills the whole namespace.
//
// Each confinement is reported as enforced or not, with its mechanism. A
// confinement the profile requires that cannot be enforced on this kernel
// refuses the launch with a message naming it; nothing is reported as
// enforced that was not applied.
//
// Limits on output and time (stdout and stderr bytes, start-up time,
// per-request time) are enforced by the returned [stdio.Server] itself.
//
// Egress mode gives the server one route out: a TCP listener on 127.0.0.1
// inside its network namespace, served by mcpseal's CONNECT proxy outside
// it, which lets through only the profile's "host:port" entries, resolves
// names itself, dials the address it checked, and refuses loopback,
// private, link-local and metadata addresses unless the entry is that IP
// literally. The server finds the proxy in HTTPS_PROXY and HTTP_PROXY.
//
// What the sandbox observes (a denied system call, a limit reached, the
// server's exit) is delivered as [Event]s.
package launch

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Request is what the caller asks to launch under a profile.
type Request struct {
	// Argv is the command line given on mcpseal's command line, nil when
	// none was given. When not nil it must equal the profile's argv.
	Argv []string
	// Dir is the working folder asked for, "" for the profile's. When not
	// empty it must equal the profile's cwd.
	Dir string
	// LookupEnv reads mcpseal's environment for the profile's env.pass,
	// after verification; nil passes nothing.
	LookupEnv func(string) (string, bool)
	// Events receives what the sandbox observes; nil discards.
	Events func(Event)
}

// Report says what was verified and which confinements are enforced.
type Report struct {
	ProfileDigest string
	Executable    string // "sha256:…" of the bytes executed
	Tree          string // "h1:…", "" without a tree
	TreeFiles     int
	// Enforced and NotEnforced partition AllConfinements.
	Enforced    []Enforcement
	NotEnforced []Enforcement
}

// Enforcement is one confinement and how it is, or why it is not,
// enforced.
type Enforcement struct {
	Confinement Confinement
	Detail      string
	Required    bool
}

// IsEnforced reports whether c is enforced.
func (r *Report) IsEnforced(c Confinement) bool {
	return slices.ContainsFunc(r.Enforced, func(e Enforcement) bool { return e.Confinement == c })
}

// ErrUnenforceable is wrapped by the error of a launch refused because a
// required confinement cannot be enforced here.
var ErrUnenforceable = errors.New("a required confinement cannot be enforced")

// Start verifies req against p and the disk, then launches the server in
// the sandbox. The server is running when it returns; the caller owns it
// (stdio.Run stops it: stdin closed, then SIGTERM, then SIGKILL).
func Start(p *Profile, req Request) (*Server, *Report, error) {
	digest, err := p.Digest()
	if err != nil {
		return nil, nil, err
	}
	v, err := verify(p, req)
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{ProfileDigest: digest, Executable: p.Executable.SHA256, TreeFiles: v.tree.Files}
	if p.Tree != nil {
		rep.Tree = p.Tree.Digest
	}
	env := resolveEnv(p, req.LookupEnv)
	srv, err := startSandbox(p, v, env, req.Events, rep, false)
	v.Close()
	if err != nil {
		return nil, rep, err
	}
	return srv, rep, nil
}

// resolveEnv builds the server's whole environment: the profile's fixed
// values and the passed names that are set in mcpseal's environment.
func resolveEnv(p *Profile, lookup func(string) (string, bool)) []string {
	env := make([]string, 0, len(p.Env.Set)+len(p.Env.Pass))
	for k, v := range p.Env.Set {
		env = append(env, k+"="+v)
	}
	if lookup != nil {
		for _, k := range p.Env.Pass {
			if v, ok := lookup(k); ok && len(v) <= maxEnvValue {
				env = append(env, k+"="+v)
			}
		}
	}
	slices.Sort(env)
	return env
}

// LookupEnv is os.LookupEnv, for Request.LookupEnv.
func LookupEnv(k string) (string, bool) { return os.LookupEnv(k) }

func (e Enforcement) String() string {
	req := ""
	if e.Required {
		req = " (required)"
	}
	return fmt.Sprintf("%s: %s%s", e.Confinement, e.Detail, req)
}
