package policy

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// This file checks the "providers" entries of a policy file.

func (c *checker) provider(path, name string, pj *providerJSON) (*providerConfig, error) {
	if name == BuiltinProvider || !isPlainKey(name) || len(name) > maxProviderNameLen {
		return nil, c.fail(path, "a provider name is 1 to %d of [A-Za-z0-9_-] and not %q", maxProviderNameLen, BuiltinProvider)
	}
	pc := &providerConfig{name: name, kind: pj.Kind, timeout: defaultProviderTimeout, stages: allStages()}
	if pj.Timeout != "" {
		d, err := c.duration(joinPath(path, "timeout"), pj.Timeout, maxProviderTimeout)
		if err != nil {
			return nil, err
		}
		pc.timeout = d
	}
	if pj.Stages != nil {
		pc.stages = map[Stage]bool{}
		for i, s := range pj.Stages {
			st := Stage(s)
			at := fmt.Sprintf("%s.stages[%d]", path, i)
			if !st.valid() {
				return nil, c.fail(at, "a stage is %q, %q or %q", StageBeforeConnect, StageAfterConnect, StageBeforeToolCall)
			}
			if pc.stages[st] {
				return nil, c.fail(at, "stage %s is listed twice", quoteKey(s))
			}
			pc.stages[st] = true
		}
	}
	switch pj.Kind {
	case kindCommand:
		return c.commandProvider(path, pj, pc)
	case kindHTTP:
		return c.httpProvider(path, pj, pc)
	}
	return nil, c.fail(joinPath(path, "kind"), "kind must be %q or %q", kindCommand, kindHTTP)
}

func (c *checker) commandProvider(path string, pj *providerJSON, pc *providerConfig) (*providerConfig, error) {
	if pj.URL != "" || pj.Keys != nil || pj.BearerEnv != "" {
		return nil, c.fail(path, "a command provider takes command, env, timeout and stages only")
	}
	if len(pj.Command) == 0 || !isAbsPath(pj.Command[0]) {
		return nil, c.fail(joinPath(path, "command"), "command is the provider's argv; its first element is an absolute path (no shell, no PATH lookup)")
	}
	for i, n := range pj.Env {
		if !isEnvName(n) {
			return nil, c.fail(fmt.Sprintf("%s.env[%d]", path, i), "an environment variable name is [A-Za-z_][A-Za-z0-9_]*")
		}
	}
	pc.command, pc.env = slices.Clone(pj.Command), slices.Clone(pj.Env)
	return pc, nil
}

func (c *checker) httpProvider(path string, pj *providerJSON, pc *providerConfig) (*providerConfig, error) {
	if pj.Command != nil || pj.Env != nil {
		return nil, c.fail(path, "an http provider takes url, keys, bearer_env, timeout and stages only")
	}
	up := joinPath(path, "url")
	u, err := url.Parse(pj.URL)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return nil, c.fail(up, "url must be an absolute https URL without user info or fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	default:
		return nil, c.fail(up, "url must use https (plain http only to a loopback address)")
	}
	pc.url = u.String()
	if len(pj.Keys) == 0 {
		return nil, c.fail(joinPath(path, "keys"), "an http provider needs at least one pinned receipt key")
	}
	pc.keys = map[string]ed25519.PublicKey{}
	for _, kid := range sortedKeys(pj.Keys) {
		kp := joinPath(joinPath(path, "keys"), kid)
		if !isKeyID(kid) {
			return nil, c.fail(kp, "a key id is 1 to 64 of [A-Za-z0-9._-]")
		}
		key, err := parsePublicKey(pj.Keys[kid])
		if err != nil {
			return nil, c.fail(kp, "%v", err)
		}
		pc.keys[kid] = key
	}
	if pj.BearerEnv != "" && !isEnvName(pj.BearerEnv) {
		return nil, c.fail(joinPath(path, "bearer_env"), "an environment variable name is [A-Za-z_][A-Za-z0-9_]*")
	}
	pc.bearerEnv = pj.BearerEnv
	return pc, nil
}

// parsePublicKey reads "ed25519:<standard base64 of 32 bytes>".
func parsePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return nil, fmt.Errorf("a key is \"ed25519:\" followed by the base64 public key")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize || base64.StdEncoding.EncodeToString(raw) != b64 {
		return nil, fmt.Errorf("the key is not %d bytes of canonical standard base64", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isAbsPath(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func isEnvName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isKeyID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
