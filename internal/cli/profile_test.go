package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/launch"
)

// The sandbox's helper is this test binary started again (launch starts
// /proc/self/exe sandbox-init): run the helper, not the tests. An init
// function, not TestMain, so that the package keeps its TestMain free.
func init() {
	if len(os.Args) > 1 && os.Args[1] == launch.HelperCommand {
		os.Exit(launch.HelperMain(os.Args[2:]))
	}
}

// profileHome points MCPSEAL_HOME at a fresh folder.
func profileHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("MCPSEAL_HOME", home)
	return home
}

// copyProgram copies /usr/bin/true into a temporary folder.
func copyProgram(t *testing.T) string {
	t.Helper()
	src, err := os.Open("/usr/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "server")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	return path
}

func TestProfileCreateShowCheck(t *testing.T) {
	home := profileHome(t)
	server := copyProgram(t)
	r := runPins(t, "", "profile", "create", "tiny", "--yes", "--pass-env", "LANG", "--", server, "--stdio")
	r.want(t, ExitOK, []string{`"path": "` + server + `"`, "digest: sha256:", "wrote " + filepath.Join(home, "profiles", "tiny.json")}, nil)
	digest := r.stdout[strings.Index(r.stdout, "digest: ")+len("digest: "):]
	digest = strings.TrimSpace(digest[:strings.Index(digest, "\n")])

	runPins(t, "", "profile", "show", "tiny").want(t, ExitOK, []string{"digest   " + digest, `"--stdio"`, `"LANG"`}, nil)
	js := runPins(t, "", "profile", "show", "tiny", "--json")
	var out profileShowJSON
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || out.Version != 1 || out.Digest != digest || out.Name != "tiny" {
		t.Fatalf("show --json: %+v, %v\n%s", out, err, js.stdout)
	}
	check := runPins(t, "", "profile", "check", "tiny")
	check.want(t, ExitOK, []string{"ok       executable", "ok       filesystem", "ok       sandbox"}, nil)
	if strings.Contains(check.stdout, "MISSING") {
		t.Errorf("check reports a missing line:\n%s", check.stdout)
	}
	// A profile file given by path works the same.
	runPins(t, "", "profile", "show", filepath.Join(home, "profiles", "tiny.json")).want(t, ExitOK, []string{"digest   " + digest}, nil)
}

func TestProfileCreateNeedsConfirmation(t *testing.T) {
	home := profileHome(t)
	server := copyProgram(t)
	runPins(t, "", "profile", "create", "tiny", "--", server).want(t, ExitFailure, nil, []string{"needs confirmation", "--yes"})
	if _, err := os.Stat(filepath.Join(home, "profiles", "tiny.json")); err == nil {
		t.Error("the profile was written without confirmation")
	}
	pinsFakeTerminal(t)
	runPins(t, "n\n", "profile", "create", "tiny", "--", server).want(t, ExitFailure, nil, []string{"not confirmed"})
	runPins(t, "y\n", "profile", "create", "tiny", "--", server).want(t, ExitOK, []string{"wrote"}, nil)
}

func TestProfileCreateRefusesToReplace(t *testing.T) {
	profileHome(t)
	server := copyProgram(t)
	runPins(t, "", "profile", "create", "tiny", "--yes", "--", server).want(t, ExitOK, nil, nil)
	runPins(t, "", "profile", "create", "tiny", "--yes", "--", server, "x").want(t, ExitFailure, nil, []string{"exists", "--replace"})
	runPins(t, "", "profile", "create", "tiny", "--yes", "--replace", "--", server, "x").want(t, ExitOK, nil, nil)
	runPins(t, "", "profile", "show", "tiny").want(t, ExitOK, []string{`"x"`}, nil)
}

func TestProfileCheckSwappedExecutable(t *testing.T) {
	profileHome(t)
	server := copyProgram(t)
	runPins(t, "", "profile", "create", "tiny", "--yes", "--", server).want(t, ExitOK, nil, nil)
	if err := os.WriteFile(server, []byte("\x7fELF swapped"), 0o755); err != nil {
		t.Fatal(err)
	}
	runPins(t, "", "profile", "check", "tiny").want(t, ExitFailure, []string{"MISSING  executable", "bytes changed"}, []string{"cannot launch here"})
}

func TestProfileExecRefusesOtherArgv(t *testing.T) {
	profileHome(t)
	server := copyProgram(t)
	runPins(t, "", "profile", "create", "tiny", "--yes", "--", server).want(t, ExitOK, nil, nil)
	runPins(t, "", "run", "--profile", "tiny", "--", server, "--other").want(t, ExitRefused, nil, []string{"launch refused: argv", "profile check tiny"})
}

func TestProfileWritableByOthersRefused(t *testing.T) {
	home := profileHome(t)
	server := copyProgram(t)
	runPins(t, "", "profile", "create", "tiny", "--yes", "--", server).want(t, ExitOK, nil, nil)
	if err := os.Chmod(filepath.Join(home, "profiles", "tiny.json"), 0o666); err != nil {
		t.Fatal(err)
	}
	runPins(t, "", "profile", "show", "tiny").want(t, ExitFailure, nil, []string{"may be written by other users"})
}

func TestProfileUsage(t *testing.T) {
	profileHome(t)
	runPins(t, "", "profile", "create", "tiny").want(t, ExitUsage, nil, []string{"after --"})
	runPins(t, "", "profile", "create", "Bad/Name", "--", "true").want(t, ExitUsage, nil, []string{"NAME must be"})
	runPins(t, "", "profile", "show").want(t, ExitUsage, nil, nil)
	runPins(t, "", "profile", "show", "missing").want(t, ExitFailure, nil, []string{"no such launch profile", "profile create missing"})
}
