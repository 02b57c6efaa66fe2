package launch

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyHostile copies the hostile server to dir/name (0755) and returns
// its path.
func copyHostile(t *testing.T, dir, name string) string {
	t.Helper()
	src, err := os.Open(hostileBin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, name)
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantRefused checks that Start refused with a *VerifyError about what.
func wantRefused(t *testing.T, p *Profile, req Request, what string) *VerifyError {
	t.Helper()
	srv, _, err := Start(p, req)
	if err == nil {
		srv.Kill()
		srv.Wait()
		t.Fatalf("Start succeeded; want it refused (%s)", what)
	}
	var ve *VerifyError
	if !errors.As(err, &ve) || !errors.Is(err, ErrVerify) {
		t.Fatalf("Start: %v; want a *VerifyError", err)
	}
	if ve.What != what {
		t.Fatalf("refused for %s (%v); want %s", ve.What, err, what)
	}
	return ve
}

func TestExecutableSwappedAfterProfileCreation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := hostileProfile(t)
	p.Executable.Path = copyHostile(t, dir, "server")
	// Another program, same path, after the profile pinned it.
	if err := os.WriteFile(p.Executable.Path, []byte("\x7fELF not the pinned server"), 0o755); err != nil {
		t.Fatal(err)
	}
	ve := wantRefused(t, p, Request{}, "executable")
	if ve.Want != p.Executable.SHA256 || ve.Got == "" || ve.Got == ve.Want {
		t.Errorf("error digests: pinned %q, found %q", ve.Want, ve.Got)
	}
}

// TestExecutableSwappedBetweenCheckAndExec swaps the file at the
// moment between verification and launch. The verified descriptor would
// still run the pinned bytes, but the swap is caught and refused.
func TestExecutableSwappedBetweenCheckAndExec(t *testing.T) {
	dir := t.TempDir()
	p := hostileProfile(t)
	p.Executable.Path = copyHostile(t, dir, "server")
	evil := filepath.Join(dir, "evil")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\necho pwned\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	afterVerify = func() {
		if err := os.Rename(evil, p.Executable.Path); err != nil {
			t.Error(err)
		}
	}
	defer func() { afterVerify = nil }()
	ve := wantRefused(t, p, Request{}, "executable")
	if !strings.Contains(ve.Reason, "replaced after verification") {
		t.Errorf("reason %q", ve.Reason)
	}
}

func TestExecutableModifiedBetweenCheckAndExec(t *testing.T) {
	dir := t.TempDir()
	p := hostileProfile(t)
	p.Executable.Path = copyHostile(t, dir, "server")
	afterVerify = func() {
		f, err := os.OpenFile(p.Executable.Path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.Write([]byte("appended"))
		f.Close()
	}
	defer func() { afterVerify = nil }()
	ve := wantRefused(t, p, Request{}, "executable")
	if !strings.Contains(ve.Reason, "modified after verification") {
		t.Errorf("reason %q", ve.Reason)
	}
}

func TestExecutableBehindSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := hostileProfile(t)
	real := copyHostile(t, dir, "server")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p.Executable.Path = link
	wantRefused(t, p, Request{}, "executable")
	// A link in a folder of the path counts too.
	linkDir := filepath.Join(dir, "linkdir")
	if err := os.Symlink(dir, linkDir); err != nil {
		t.Fatal(err)
	}
	p.Executable.Path = filepath.Join(linkDir, "server")
	wantRefused(t, p, Request{}, "executable")
}

func TestScriptExecutableRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := hostileProfile(t)
	p.Executable = Executable{Path: script, SHA256: fileSHA256(t, script)}
	ve := wantRefused(t, p, Request{}, "executable")
	if !strings.Contains(ve.Reason, "interpreter") {
		t.Errorf("reason %q does not say to pin the interpreter", ve.Reason)
	}
}

func TestPackageTreeChanged(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, "index.js"), []byte("console.log('pinned')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _, err := TreeDigest(tree)
	if err != nil {
		t.Fatal(err)
	}
	p := hostileProfile(t)
	p.Tree = &Tree{Path: tree, Digest: d}
	s := launch(t, p) // the pinned tree launches
	s.close()
	if err := os.WriteFile(filepath.Join(tree, "postinstall.js"), []byte("steal()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ve := wantRefused(t, p, Request{}, "tree")
	if ve.Want != d || ve.Got == d {
		t.Errorf("error digests: pinned %q, found %q", ve.Want, ve.Got)
	}
}

func TestArgvDiffersFromProfile(t *testing.T) {
	t.Parallel()
	p := hostileProfile(t)
	wantRefused(t, p, Request{Argv: []string{"hostile", "--extra"}}, "argv")
	wantRefused(t, p, Request{Argv: []string{"other"}}, "argv")
	wantRefused(t, p, Request{Argv: []string{}}, "argv")
	s := launch(t, p) // nil Argv: the profile's
	s.close()
}

func TestCwdDiffersFromProfile(t *testing.T) {
	t.Parallel()
	p := hostileProfile(t)
	wantRefused(t, p, Request{Dir: t.TempDir()}, "cwd")
	other := t.TempDir()
	link := filepath.Join(other, "link")
	if err := os.Symlink(p.Cwd, link); err != nil {
		t.Fatal(err)
	}
	p.Cwd = link
	wantRefused(t, p, Request{}, "cwd")
}

// TestEnvironmentIsExact checks that the server sees exactly the
// profile's environment: fixed values and passed names, nothing else of
// mcpseal's.
func TestEnvironmentIsExact(t *testing.T) {
	t.Setenv("MCPSEAL_TEST_PASSED", "passed-value")
	t.Setenv("MCPSEAL_TEST_NOT_PASSED", "leaked-value")
	p := hostileProfile(t)
	p.Env = Env{Pass: []string{"MCPSEAL_TEST_ABSENT", "MCPSEAL_TEST_PASSED"}, Set: map[string]string{"FIXED": "fixed-value"}}
	s := launchReq(t, p, Request{LookupEnv: LookupEnv})
	got := s.mustCall("env", nil)
	want := "FIXED=fixed-value\nMCPSEAL_TEST_PASSED=passed-value"
	if got != want {
		t.Errorf("the server's environment:\n%s\nwant:\n%s", got, want)
	}
}
