package crawl

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/launch"
)

// SandboxLauncher starts each probed server under a launch profile made
// for it on the spot (launch.Propose): the interpreter and the unpacked
// package pinned by digest and executed from the verified descriptor, no
// network at all, read-only access to the package and the system's
// libraries, a throwaway writable HOME, finite limits, and every
// confinement required — a probe that cannot be confined is not started.
type SandboxLauncher struct {
	// Events receives what the sandbox observes (denied system calls,
	// limits reached); nil discards them.
	Events func(launch.Event)
}

// Confined is true: every confinement of the profile is enforced or the
// server does not start.
func (SandboxLauncher) Confined() bool { return true }

// sandboxStopGrace bounds how long a probed server may take to stop.
const sandboxStopGrace = 2 * time.Second

// Start proposes a profile for c and launches it confined.
func (l SandboxLauncher) Start(ctx context.Context, c Command) (Process, error) {
	env := map[string]string{}
	for _, kv := range c.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	home := env["HOME"]
	if home == "" {
		return nil, errors.New("crawl: a sandboxed probe needs a throwaway HOME")
	}
	p, _, err := launch.Propose(launch.ProposeOptions{
		Name:      "crawl-probe",
		Argv:      c.Argv,
		Dir:       c.Dir,
		Getenv:    func(k string) string { return env[k] },
		ReadOnly:  []string{c.Dir},
		ReadWrite: []string{home},
		Set:       env,
		Network:   launch.Network{Mode: launch.NetworkNone, Allow: []string{}},
	})
	if err != nil {
		return nil, err
	}
	p.Cwd = c.Dir
	srv, _, err := launch.Start(p, launch.Request{Events: l.Events})
	if err != nil {
		return nil, err
	}
	sp := &sandboxProcess{srv: srv, done: make(chan struct{})}
	if e := srv.Stderr(); e != nil {
		go func() { _, _ = io.Copy(&sp.tail, e) }()
	}
	go func() { _ = srv.Wait(); close(sp.done) }()
	go func() {
		select {
		case <-ctx.Done():
			srv.Kill()
		case <-sp.done:
		}
	}()
	return sp, nil
}

type sandboxProcess struct {
	srv  *launch.Server
	tail tailBuffer
	done chan struct{}
}

func (p *sandboxProcess) Stdin() io.WriteCloser { return p.srv.Stdin() }
func (p *sandboxProcess) Stdout() io.Reader     { return p.srv.Stdout() }
func (p *sandboxProcess) StderrTail() []byte    { return p.tail.bytes() }

// Stop closes the server's stdin, then terminates and kills it, each
// after a bounded wait.
func (p *sandboxProcess) Stop() {
	_ = p.srv.Stdin().Close()
	for _, stop := range []func(){func() {}, p.srv.Terminate, p.srv.Kill} {
		stop()
		select {
		case <-p.done:
			return
		case <-time.After(sandboxStopGrace):
		}
	}
	<-p.done
}
