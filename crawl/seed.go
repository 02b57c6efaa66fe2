package crawl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpseal/mcpseal/tlog"
)

// MaxSeedFile bounds a seed list: thousands of servers fit in 4 MiB.
const MaxSeedFile = 4 << 20

// maxArgv bounds a local server's command line.
const maxArgv = 64

// A Target is one server to probe: a registry package, or a local command
// from a seed list.
type Target struct {
	// ID is the server's identity in the log: npm:<package> or
	// local:<name>.
	ID string
	// Package and Version (optional) for registry servers.
	Package, Version string
	// Argv and Dir for local servers.
	Argv []string
	Dir  string
}

// Local reports whether the target is a local command.
func (t Target) Local() bool { return t.Package == "" }

// ParseSeed reads a seed list:
//
//	{"servers": [
//	  {"package": "@modelcontextprotocol/server-memory"},
//	  {"package": "weather-mcp", "version": "1.2.0"},
//	  {"name": "internal-docs", "command": ["node", "server.js"]}
//	]}
//
// Local commands run in dir (the seed file's folder).
func ParseSeed(b []byte, dir string) ([]Target, error) {
	var doc struct {
		Servers []struct {
			Package string   `json:"package"`
			Version string   `json:"version"`
			Name    string   `json:"name"`
			Command []string `json:"command"`
		} `json:"servers"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&doc); err != nil {
		return nil, errors.New("the seed list does not decode (want {\"servers\": [...]})")
	}
	var out []Target
	seen := map[string]bool{}
	for i, s := range doc.Servers {
		var t Target
		switch {
		case s.Package != "" && s.Name == "" && s.Command == nil:
			if !validPackageName(s.Package) || (s.Version != "" && !validSeedVersion(s.Version)) {
				return nil, fmt.Errorf("seed server %d: invalid package name or version", i)
			}
			t = Target{ID: "npm:" + s.Package, Package: s.Package, Version: s.Version}
		case s.Package == "" && s.Version == "" && s.Name != "" && len(s.Command) > 0 && len(s.Command) <= maxArgv:
			t = Target{ID: "local:" + s.Name, Argv: s.Command, Dir: dir}
			if !tlog.ValidServer(t.ID) {
				return nil, fmt.Errorf("seed server %d: a name is 1 to 214 of A-Z a-z 0-9 @ / . _ ~ -", i)
			}
		default:
			return nil, fmt.Errorf("seed server %d: give either a package (and version), or a name and a command", i)
		}
		if seen[t.ID] {
			return nil, fmt.Errorf("seed server %d: %s is listed twice", i, t.ID)
		}
		seen[t.ID] = true
		out = append(out, t)
	}
	return out, nil
}

func validSeedVersion(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-' || c == '+') {
			return false
		}
	}
	return len(v) <= 64 && v[0] >= '0' && v[0] <= '9'
}

// MaxOptOutFile bounds the opt-out list.
const MaxOptOutFile = 4 << 20

// ParseOptOut reads an opt-out list: one package name or server identity
// (npm:<package>, local:<name>) a line; blank lines and lines starting
// with # are ignored. It returns identities.
func ParseOptOut(b []byte) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id := line
		if !strings.Contains(line, ":") {
			id = "npm:" + line
		}
		if !tlog.ValidServer(id) {
			return nil, fmt.Errorf("opt-out list line %d is not a package name or server identity", n)
		}
		out[id] = true
	}
	return out, sc.Err()
}

// seedDir returns the folder local commands of a seed file run in.
func seedDir(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Dir(path)
	}
	return filepath.Dir(abs)
}
