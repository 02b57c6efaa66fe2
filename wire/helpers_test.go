package wire

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/wire/golden")

// testSelf is the mcpseal path the tests put in launch lines.
const testSelf = "/opt/mcpseal/bin/mcpseal"

// testdata is the repository's testdata/wire folder.
const testdata = "../testdata/wire"

// fakeRun reads run lines with a flag set shaped like `mcpseal run` once
// --lock (issue 3) and --url / --credential-file (issue 5) are in; the
// real one is tested in internal/cli.
type fakeRun struct {
	missing []string
	// home adds --home (issue 13); the golden files predate it.
	home bool
}

var fakeRunFlags = []string{"name", "posture", "lock", "url", "credential-file", "max-frame", "verify-timeout", "log-level"}

func (f fakeRun) Has(flag string) bool {
	if flag == "home" {
		return f.home
	}
	for _, m := range f.missing {
		if m == flag {
			return false
		}
	}
	for _, x := range fakeRunFlags {
		if x == flag {
			return true
		}
	}
	return false
}

func (f fakeRun) Parse(args []string) (RunLine, error) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("name", "", "")
	posture := fs.String("posture", "guard", "")
	var lock, url *string
	if f.Has("lock") {
		lock = fs.String("lock", "", "")
	}
	if f.Has("url") {
		url = fs.String("url", "", "")
		fs.String("credential-file", "", "")
	}
	var home *string
	if f.home {
		home = fs.String("home", "", "")
	}
	policy := fs.String("policy", "", "")
	fs.Int("max-frame", 1<<24, "")
	fs.Duration("verify-timeout", 30*time.Second, "")
	fs.String("log-level", "info", "")
	if err := fs.Parse(args); err != nil {
		return RunLine{}, err
	}
	l := RunLine{Name: *name, HasName: fs.Changed("name"), Posture: *posture, Policy: *policy}
	if lock != nil {
		l.Lock = *lock
	}
	if url != nil {
		l.URL = *url
	}
	if home != nil {
		l.Home = *home
	}
	switch {
	case l.URL != "":
		if len(fs.Args()) != 0 {
			return l, errors.New("run --url takes no server command")
		}
	case fs.ArgsLenAtDash() != 0 || len(fs.Args()) == 0:
		return l, errors.New("run needs the server command after --")
	default:
		l.Argv = fs.Args()
	}
	switch l.Posture {
	case "guard", "strict", "monitor":
	default:
		return l, errors.New("posture must be guard, strict or monitor")
	}
	return l, nil
}

// testOptions are the options of a test run in home.
func testOptions(t *testing.T) Options {
	t.Helper()
	return Options{Self: testSelf, Home: filepath.Join(t.TempDir(), "mcpseal-home"), Run: fakeRun{},
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}
}

// copyHome copies testdata/wire/home to a temporary folder, writing the
// folder's path wherever the files say @HOME@.
func copyHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	src := filepath.Join(testdata, "home")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(home, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, bytes.ReplaceAll(data, []byte("@HOME@"), []byte(home)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// homeFiles lists the configs in a copied home: every client's user file
// and, with project, the project configs of ~/work/app.
func homeFiles(home string, project bool) []File {
	files := Existing(UserFiles(Env{GOOS: "linux", Home: home}))
	if project {
		files = append(files, Existing(ProjectFiles(filepath.Join(home, "work", "app")))...)
	}
	return files
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// credentialID matches a credential file's name, which hashes a
// temporary path.
var credentialID = regexp.MustCompile(`credentials[/\\][0-9a-f]{16}\.json`)

// golden compares got with testdata/wire/golden/name, after replacing
// the temporary paths in it; -update rewrites the file.
func golden(t *testing.T, name string, got []byte, replace ...string) {
	t.Helper()
	for i := 0; i+1 < len(replace); i += 2 {
		got = bytes.ReplaceAll(got, []byte(replace[i]), []byte(replace[i+1]))
	}
	got = credentialID.ReplaceAll(got, []byte("credentials/ID.json"))
	path := filepath.Join(testdata, "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run go test ./wire -update to create it)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func actions(p *Plan) map[string]Action {
	out := map[string]Action{}
	for _, fp := range p.Files {
		for _, c := range fp.Changes {
			out[fp.File.Client+"/"+strings.Join(c.Entry.where, "/")] = c.Action
		}
	}
	return out
}
