package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// testLimits are tight limits for the hostile server.
var testLimits = Limits{
	StartupMS:     10_000,
	RequestMS:     20_000,
	StdoutBytes:   8 << 20,
	StderrBytes:   1 << 20,
	MemoryBytes:   256 << 20,
	CPUSeconds:    30,
	Processes:     32,
	OpenFiles:     64,
	FileSizeBytes: 1 << 20,
}

func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// hostileProfile is a profile for the hostile server: no tree, no paths
// beyond its executable, no network, every confinement required.
func hostileProfile(t testing.TB) *Profile {
	t.Helper()
	return &Profile{
		Version:    FormatVersion,
		Name:       "hostile",
		Executable: Executable{Path: hostileBin, SHA256: fileSHA256(t, hostileBin)},
		Argv:       []string{"hostile"},
		Cwd:        t.TempDir(),
		Env:        Env{Set: map[string]string{}},
		Limits:     testLimits,
		Network:    Network{Mode: NetworkNone},
		Require:    AllConfinements,
	}
}

// eventLog collects a launch's events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) find(pred func(Event) bool) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if pred(e) {
			return e, true
		}
	}
	return Event{}, false
}

// await is find, waiting up to 5 s for the event: a denied system call is
// reported by the supervisor's own goroutine, which may come after the
// server's answer to the call that made it.
func (l *eventLog) await(pred func(Event) bool) (Event, bool) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if e, ok := l.find(pred); ok || time.Now().After(deadline) {
			return e, ok
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// session is a launched hostile server with a client on its stdio.
type session struct {
	t      testing.TB
	srv    *Server
	rep    *Report
	c      *testmcp.Client
	events *eventLog
	stderr chan string
	once   sync.Once
	err    error
}

// launch starts p and initializes a session with it.
func launch(t testing.TB, p *Profile) *session {
	t.Helper()
	return launchReq(t, p, Request{})
}

// launchReq is launch with a request (its Events are replaced).
func launchReq(t testing.TB, p *Profile, req Request) *session {
	t.Helper()
	events := &eventLog{}
	req.Events = events.add
	srv, rep, err := Start(p, req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := &session{t: t, srv: srv, rep: rep, events: events, stderr: make(chan string, 1)}
	go func() {
		b := new(strings.Builder)
		buf := make([]byte, 4096)
		for {
			n, err := srv.Stderr().Read(buf)
			if b.Len() < 1<<20 {
				b.Write(buf[:n])
			}
			if err != nil {
				break
			}
		}
		s.stderr <- b.String()
	}()
	s.c = testmcp.NewClient(srv.Stdout(), srv.Stdin())
	s.c.Timeout = 15 * time.Second
	t.Cleanup(func() { s.close() })
	if _, err := s.c.Initialize("2025-06-18", nil); err != nil {
		werr := srv.Wait()
		var stderr string
		select {
		case stderr = <-s.stderr:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("initialize: %v\nserver: %v\nstderr: %s\nevents:\n%s", err, werr, stderr, events)
	}
	return s
}

// call calls a hostile tool and returns its text.
func (s *session) call(tool string, args any) (string, error) {
	res, err := s.c.CallTool(tool, args)
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return "", err
	}
	return r.Content[0].Text, nil
}

// mustCall calls a tool that must answer.
func (s *session) mustCall(tool string, args any) string {
	s.t.Helper()
	text, err := s.call(tool, args)
	if err != nil {
		s.t.Fatalf("%s: %v\nevents:\n%s", tool, err, s.events)
	}
	return text
}

// close stops the server the way stdio.Run does: stdin closed, then
// SIGTERM, then SIGKILL, each after a bounded wait. It returns Wait's
// error.
func (s *session) close() error {
	s.once.Do(func() {
		s.srv.Stdin().Close()
		done := make(chan error, 1)
		go func() { done <- s.srv.Wait() }()
		for stage := 0; ; stage++ {
			select {
			case s.err = <-done:
				s.c.Close()
				return
			case <-time.After(2 * time.Second):
				switch stage {
				case 0:
					s.srv.Terminate()
				case 1:
					s.srv.Kill()
				default:
					s.t.Errorf("the sandbox did not end 6 s after stdin closed")
					s.err = <-done
					return
				}
			}
		}
	})
	return s.err
}
