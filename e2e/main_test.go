package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/pgtest"
	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// Error codes and exit statuses mcpseal documents (docs/error-codes.md).
const (
	codeBlocked      = -32001
	codeHeld         = -32002
	codeUnverified   = -32003
	codeServerExited = -32004
	codeRefused      = -32005

	exitOK      = 0
	exitBlocked = 3
	exitServer  = 5
	exitVerify  = 6
)

// e2eParallel is the default -parallel for this package. Why 4: enough to
// overlap process start-up and Node.js servers on a 2-core machine without
// starving the timing checks.
const e2eParallel = 4

// bin holds the binaries TestMain built.
var bin struct {
	mcpseal, testserver, sdkserver string
}

// repoRoot is the module root (the parent of this package's folder).
var repoRoot string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	// These tests mostly wait on child processes, so more of them may run
	// at once than there are cores (the default -parallel). An explicit
	// -parallel wins.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && runtime.GOMAXPROCS(0) < e2eParallel {
		_ = flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = filepath.Dir(wd)
	dir, err := os.MkdirTemp("", "mcpseal-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The fleet tests' PostgreSQL cluster, started by the first of them.
	defer pgtest.Stop()

	pkgs := []string{"./internal/testmcp/cmd/testserver", "./internal/testmcp/cmd/sdkserver"}
	bin.mcpseal = os.Getenv("MCPSEAL_E2E_BIN")
	if bin.mcpseal == "" {
		pkgs = append(pkgs, "./cmd/mcpseal")
		bin.mcpseal = filepath.Join(dir, "mcpseal")
	}
	bin.testserver = filepath.Join(dir, "testserver")
	bin.sdkserver = filepath.Join(dir, "sdkserver")
	start := time.Now()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if os.Getenv("MCPSEAL_E2E_RACE") != "" {
		args = append(args, "-race") // slower; finds races in the proxy under real traffic
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: go build %s: %v\n%s\n", strings.Join(pkgs, " "), err, out)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built %s in %v\n", strings.Join(pkgs, " "), time.Since(start).Round(time.Millisecond))
	}
	return m.Run()
}

// home returns a fresh MCPSEAL_HOME.
func home(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "mcpseal-home")
}

// environ is this process's environment with MCPSEAL_HOME set and the
// test's process tag (see tag).
func environ(t *testing.T, home string, extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MCPSEAL_HOME=") || strings.HasPrefix(kv, testmcp.StateDirEnv+"=") || strings.HasPrefix(kv, tagEnv+"=")
	})
	return append(append(env, "MCPSEAL_HOME="+home, tagEnv+"="+tag(t)), extra...)
}

// tagEnv marks every process a test starts, and so (through inherited
// environments) their children: a test's cleanup finds what is left of
// its processes by this mark, reports them and ends them.
const tagEnv = "MCPSEAL_E2E_TAG"

var tags sync.Map // *testing.T -> string

func tag(t *testing.T) string {
	if v, ok := tags.Load(t); ok {
		return v.(string)
	}
	v := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	if prev, loaded := tags.LoadOrStore(t, v); loaded {
		return prev.(string)
	}
	t.Cleanup(func() {
		tags.Delete(t)
		// Registered first, so it runs after every other cleanup of t
		// (those close the sessions).
		deadline := time.Now().Add(5 * time.Second)
		left := tagged(v)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			left = tagged(v)
		}
		for pid, cmdline := range left {
			t.Errorf("process %d (%s) was still running 5s after its session ended; killing it", pid, cmdline)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return v
}

// tagged finds the live processes whose environment carries tag value v.
func tagged(v string) map[int]string {
	out := map[int]string{}
	if runtime.GOOS != "linux" {
		return out
	}
	ents, _ := os.ReadDir("/proc")
	want := []byte(tagEnv + "=" + v + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie: exited, waiting for its parent
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for a process to write while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	const limit = 4 << 20 // why: a runaway child must not eat the test's memory
	if s.b.Len() < limit {
		s.b.Write(p[:min(len(p), limit-s.b.Len())])
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ownGroup puts cmd in its own process group so cleanup can end the
// whole group.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends cmd's process group. Call it only while cmd has not
// been reaped (before Wait returns), so the group id cannot have been
// reused by someone else's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// mcpseal runs an mcpseal subcommand to completion.
func mcpseal(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin.mcpseal, args...)
	cmd.Env = environ(t, home)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = nil
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, ok := waitExit(cmd, 20*time.Second)
	if !ok {
		t.Fatalf("mcpseal %s did not exit within 20s\nstderr:\n%s", strings.Join(args, " "), errb.String())
	}
	return out.String(), errb.String(), code
}

// waitExit waits up to d for cmd (already started) and returns its exit
// status; -1 when killed by a signal.
func waitExit(cmd *exec.Cmd, d time.Duration) (int, bool) {
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), true
	case <-time.After(d):
		killGroup(cmd)
		<-done
		return cmd.ProcessState.ExitCode(), false
	}
}

// proxy is a running `mcpseal run` with a testmcp.Client on its stdio.
type proxy struct {
	*testmcp.Client
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer

	once sync.Once
	done chan struct{}
	code int
}

// startProxy runs `mcpseal run [runArgs...] -- server...` with MCPSEAL_HOME
// set to home.
func startProxy(t *testing.T, home string, runArgs []string, server ...string) *proxy {
	t.Helper()
	args := append(append([]string{"run"}, runArgs...), "--")
	return startMcpseal(t, home, append(args, server...)...)
}

// startMcpseal runs mcpseal with args and a testmcp client on its stdio.
func startMcpseal(t *testing.T, home string, args ...string) *proxy {
	t.Helper()
	cmd := exec.Command(bin.mcpseal, args...)
	cmd.Env = environ(t, home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	p.Client = testmcp.NewClient(stdout, exitAwareWriter{p})
	p.Client.Timeout = 15 * time.Second
	t.Cleanup(func() {
		p.Close()
		if t.Failed() {
			t.Logf("mcpseal stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// exitAwareWriter writes to mcpseal's stdin and says so plainly when a
// write fails because mcpseal has already exited.
type exitAwareWriter struct{ p *proxy }

func (w exitAwareWriter) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	if err != nil {
		select {
		case <-w.p.done:
			return n, fmt.Errorf("mcpseal had already exited (status %d) before the client hung up: %w", w.p.code, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return n, err
}

// startScenario runs sc through mcpseal with the testserver binary.
func startScenario(t *testing.T, home string, runArgs []string, sc *testmcp.Scenario) *proxy {
	t.Helper()
	return startProxy(t, home, runArgs, bin.testserver, scenarioFile(t, sc))
}

// scenarioFile writes sc to a temp file.
func scenarioFile(t *testing.T, sc *testmcp.Scenario) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.json")
	if err := sc.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Close closes mcpseal's stdin (the client hangs up) and returns its exit
// status. It kills the process group after 10 s and then reports -1.
func (p *proxy) Close() int {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.t.Errorf("mcpseal did not exit within 10s of stdin closing")
			killGroup(p.cmd)
			<-p.done
		}
		p.Client.Close()
	})
	return p.code
}

// Exited waits up to d for mcpseal to exit on its own.
func (p *proxy) Exited(d time.Duration) (int, bool) {
	select {
	case <-p.done:
		return p.code, true
	case <-time.After(d):
		return 0, false
	}
}

// Stderr is what mcpseal wrote to stderr so far.
func (p *proxy) Stderr() string { return p.stderr.String() }

// errorData is the data member of mcpseal's errors.
type errorData struct {
	Reason string `json:"reason"`
	Server struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"server"`
	Review  string `json:"review"`
	Changes []struct {
		Kind   string   `json:"kind"`
		Name   string   `json:"name"`
		Labels []string `json:"labels"`
	} `json:"changes"`
}

// labels returns the labels of the change to name.
func (d *errorData) labels(name string) []string {
	for _, c := range d.Changes {
		if c.Name == name {
			return c.Labels
		}
	}
	return nil
}

// wantRPCError checks that err is a JSON-RPC error with code and returns
// its data.
func wantRPCError(t *testing.T, err error, code int) *errorData {
	t.Helper()
	var re *testmcp.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want JSON-RPC error %d", err, code)
	}
	if re.Code != code {
		t.Fatalf("got JSON-RPC error %d %q (data %s), want %d", re.Code, re.Message, re.Data, code)
	}
	return decodeData(t, re.Data)
}

func decodeData(t *testing.T, raw []byte) *errorData {
	t.Helper()
	var d errorData
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("error data %s: %v", raw, err)
		}
	}
	return &d
}

// checkBlockData checks the shape of a drift block's data.
func checkBlockData(t *testing.T, d *errorData, name string, wantLabels ...string) {
	t.Helper()
	if d.Reason != "drift" {
		t.Errorf("data.reason = %q, want drift", d.Reason)
	}
	if d.Server.ID == "" || d.Server.Label == "" {
		t.Errorf("data.server = %+v, want id and label", d.Server)
	}
	if d.Review != "mcpseal review "+d.Server.ID {
		t.Errorf("data.review = %q, want %q", d.Review, "mcpseal review "+d.Server.ID)
	}
	labels := d.labels(name)
	if labels == nil {
		t.Errorf("data.changes = %+v, want a change to %q", d.Changes, name)
	}
	for _, l := range wantLabels {
		if !slices.Contains(labels, l) {
			t.Errorf("labels of %q = %v, want %q among them", name, labels, l)
		}
	}
}

// labelShown reports whether human output shows a change label: its
// code ("mentions-secrets") or its words ("Mentions secrets or private
// files").
func labelShown(out, code string) bool {
	lower := strings.ToLower(out)
	return strings.Contains(lower, code) || strings.Contains(lower, strings.ReplaceAll(code, "-", " "))
}

// wantExit checks an exit status.
func wantExit(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s: mcpseal exit status %d, want %d", what, got, want)
	}
}

// vmHWM is the peak resident set size of pid in bytes (Linux), or -1.
func vmHWM(pid int) int64 {
	if runtime.GOOS != "linux" {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return n << 10
				}
			}
		}
	}
	return -1
}
