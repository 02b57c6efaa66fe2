package lock

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcpseal/mcpseal/canon"
)

// Command is a server's command identity as the config writes it, before
// any ${VAR} expansion, so that it is the same on every machine. Values of
// environment variables are kept only as digests: a config may hold a
// literal secret there.
type Command struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd,omitempty"`
	// Env maps each variable name to the "sha256:" digest of its value as
	// written.
	Env map[string]string `json:"env"`
	// Digest is the "sha256:" digest of the RFC 8785 form of
	// {"args":[...],"command":"...","cwd":"...","env":{...}} (cwd "" when
	// absent), with env as above.
	Digest string `json:"digest"`
}

// NewCommand returns the identity of a command as written in a config.
func NewCommand(command string, args []string, cwd string, env map[string]string) Command {
	c := Command{Command: command, Args: slices.Clone(args), Cwd: cwd, Env: make(map[string]string, len(env))}
	if c.Args == nil {
		c.Args = []string{}
	}
	for k, v := range env {
		c.Env[k] = digestOf([]byte(v))
	}
	c.Digest = c.computeDigest()
	return c
}

// computeDigest hashes the identity. Command identities hold only
// strings, so the canonical form cannot fail.
func (c Command) computeDigest() string {
	env := c.Env
	if env == nil {
		env = map[string]string{}
	}
	args := c.Args
	if args == nil {
		args = []string{}
	}
	b, err := json.Marshal(struct {
		Args    []string          `json:"args"`
		Command string            `json:"command"`
		Cwd     string            `json:"cwd"`
		Env     map[string]string `json:"env"`
	}{args, c.Command, c.Cwd, env})
	if err != nil {
		panic(err)
	}
	cb, err := canon.Transform(b)
	if err != nil {
		// Invalid UTF-8 in an argument: hash the bytes as marshalled.
		cb = b
	}
	return digestOf(cb)
}

// Differences names what differs between two command identities:
// "command", "args", "cwd" and "env" (a variable added, removed or set
// differently).
func (c Command) Differences(o Command) []string {
	var d []string
	if c.Command != o.Command {
		d = append(d, "command")
	}
	if !slices.Equal(c.Args, o.Args) {
		d = append(d, "args")
	}
	if c.Cwd != o.Cwd {
		d = append(d, "cwd")
	}
	if !maps.Equal(c.Env, o.Env) {
		d = append(d, "env")
	}
	return d
}

// EnvNames returns the environment variable names, sorted.
func (c Command) EnvNames() []string { return slices.Sorted(maps.Keys(c.Env)) }

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
