package wire

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Red-team tests for issue 17. Each one is named after its attack and
// fails while the attack works.

// TestRedTeamNPXProjectNodeModulesHijack: `npx -y mcpseal@0.3.0` runs
// the mcpseal of the local project when one of that version is installed
// there: npm exec looks in the nearest folder (walking up from the
// working folder) with node_modules or package.json before the registry
// or its cache. A cloned repository that ships node_modules/mcpseal
// (package.json version 0.3.0, any bin) therefore replaces the guard,
// launcher and digest check included, for every server the client starts
// in that project; status still says protected.
func TestRedTeamNPXProjectNodeModulesHijack(t *testing.T) {
	if npx, err := exec.LookPath("npx"); err == nil {
		proj := t.TempDir()
		pkg := filepath.Join(proj, "node_modules", "mcpseal")
		for p, data := range map[string]string{
			filepath.Join(pkg, "package.json"): `{"name": "mcpseal", "version": "0.3.0", "bin": {"mcpseal": "evil.js"}}`,
			filepath.Join(pkg, "evil.js"):      "#!/usr/bin/env node\nconsole.log('EVIL ' + process.argv.slice(2).join(' '))\n",
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(proj, "node_modules", ".bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../mcpseal/evil.js", filepath.Join(proj, "node_modules", ".bin", "mcpseal")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(npx, "-y", "--offline", "mcpseal@0.3.0", "run", "--name", "m", "--", "srv")
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false")
		out, _ := cmd.CombinedOutput()
		if strings.Contains(string(out), "EVIL run") {
			t.Logf("npx -y mcpseal@0.3.0 in the project ran the project's node_modules/mcpseal: %q", out)
		}
	}
	o := testOptions(t)
	r := Status([]File{oneEntry(t, `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "srv"]}`)}, o)
	if s := r.Servers[0]; s.State == Protected {
		t.Errorf("npx -y mcpseal@0.3.0 is counted as protected, but npx runs whatever mcpseal@0.3.0 the project folder (or its .npmrc registry) provides: %+v", s)
	}
}

// TestRedTeamNPXEntryEnvSteersTheLauncher: an entry's env reaches npx and
// node before any mcpseal code runs: NODE_OPTIONS=--require runs any
// script inside the launcher's process, npm_config_registry or
// npm_config_userconfig pick the registry that serves "0.3.0". The
// binary form is not exposed to these; the npx form is counted protected
// regardless.
func TestRedTeamNPXEntryEnvSteersTheLauncher(t *testing.T) {
	o := testOptions(t)
	for _, env := range []string{
		`{"NODE_OPTIONS": "--require /tmp/evil.js"}`,
		`{"npm_config_registry": "https://registry.evil.example/"}`,
		`{"NPM_CONFIG_USERCONFIG": "/tmp/evil.npmrc"}`,
	} {
		r := Status([]File{oneEntry(t, `{"command": "npx", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "srv"], "env": `+env+`}`)}, o)
		if s := r.Servers[0]; s.State == Protected {
			t.Errorf("env %s: npx launch counted as protected: %+v", env, s)
		}
	}
}

// TestRedTeamNPXAnyFileNamedNPX: the npx form is recognised by the base
// name of the command alone: ./npx, node_modules/.bin/npx or
// /proc/self/cwd/npx (a file a cloned repository ships) count as npx, and
// the line as a protected mcpseal launch, while they run the
// repository's own script. (Issue 13's branch stops trusting any file
// named mcpseal; the npx form needs the same.)
func TestRedTeamNPXAnyFileNamedNPX(t *testing.T) {
	o := testOptions(t)
	for _, command := range []string{"./npx", "node_modules/.bin/npx", "/proc/self/cwd/npx", "/tmp/npx"} {
		r := Status([]File{oneEntry(t, `{"command": "`+command+`", "args": ["-y", "mcpseal@0.3.0", "run", "--name", "m", "--", "srv"]}`)}, o)
		if s := r.Servers[0]; s.State == Protected {
			t.Errorf("command %s: counted as protected", command)
		}
	}
}
