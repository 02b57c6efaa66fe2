package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/lock"
	"github.com/mcpseal/mcpseal/pin"
)

// runLockFlags are run's lock flags.
type runLockFlags struct {
	path       string
	onlyLocked bool
	events     string
	hostConfig string
	// sequences, when set, is where accepted manifests are recorded
	// instead of the host config's file (the state database).
	sequences lock.SequenceStore
}

// lockGate is the team lock as the gate's baseline: it replaces trust on
// first use. Every listed definition the lock does not approve is
// withheld from the client and a call to it is refused; instructions the
// lock does not approve are removed.
type lockGate struct {
	entry   *lock.Entry
	events  *lock.Events
	server  string
	posture pin.Posture
}

// openLock loads and checks the lock (signature, sequence, integrity) and
// finds the server's entry. A nil lockGate with a nil error means the
// lock does not list the server and it may run under the ordinary pins.
func openLock(e *env, f runLockFlags, name string) (*lockGate, error) {
	hc := f.hostConfig
	if hc == "" {
		hc = e.getenv(lock.HostConfigEnv)
	}
	var host *lock.HostConfig
	if hc != "" {
		var err error
		if host, err = lock.LoadHostConfig(hc); err != nil {
			return nil, fmt.Errorf("lock host config: %w", err)
		}
		if f.sequences != nil {
			host.UseSequences(f.sequences)
		}
	}
	l, err := lock.Load(f.path, host)
	if err != nil {
		return nil, withHint(fmt.Errorf("cannot use the lock %s: %w", f.path, err), "the server was not started; run 'mcpseal lock verify' in the repository")
	}
	entry, ok := l.Entry(name)
	if !ok {
		if f.onlyLocked {
			return nil, withHint(fmt.Errorf("the lock %s does not list a server named %q (--only-locked)", f.path, contract.SafeName(name)), "add it with 'mcpseal lock' and review the change")
		}
		return nil, nil
	}
	var ev *lock.Events // a nil *Events writes nothing
	if f.events != "" {
		if ev, err = lock.OpenEvents(f.events); err != nil {
			return nil, fmt.Errorf("lock events: %w", err)
		}
	}
	return &lockGate{entry: entry, events: ev, server: name}, nil
}

// Observe accepts every contract: the lock, not a pin, decides what the
// client sees (Shape) and may call (Call).
func (g *lockGate) Observe(id pin.Identity, o pin.Observation, c *contract.Contract, posture pin.Posture, now time.Time) (pin.Result, error) {
	return pin.Result{Outcome: pin.Match, Pinned: c}, nil
}

func (g *lockGate) hooks(log func(string, ...any)) gate.Hooks {
	enforce := g.posture != pin.Monitor
	return gate.Hooks{
		Shape: func(profile string, kind contract.Kind, defs []contract.Definition) []gate.Shape {
			out := make([]gate.Shape, len(defs))
			verdicts := make([]lock.Verdict, len(defs))
			for i, d := range defs {
				ok, why := g.entry.Approved(kind, d.Name, d.Digest)
				verdicts[i] = lock.Verdict{Kind: kind, Name: d.Name, Digest: "sha256:" + d.Digest, Shown: ok || !enforce, Reason: why}
				if !ok {
					log("definition not approved by the lock", "kind", string(kind), "name", contract.SafeName(d.Name), "reason", string(why), "withheld", enforce)
					out[i] = gate.Shape{Withhold: enforce, Reason: string(why)}
				}
			}
			if err := g.events.Listing(g.server, kind, verdicts); err != nil {
				log("lock events", "err", err)
			}
			return out
		},
		Instructions: func(profile string, instructions *string) bool {
			ok, why := g.entry.InstructionsApproved(instructions)
			if !ok {
				log("instructions not approved by the lock", "reason", string(why), "removed", enforce)
			}
			return ok || !enforce
		},
		Call: func(ci gate.CallInfo) gate.Verdict {
			ok, why := g.entry.Approved(contract.Tools, ci.Tool.Name, ci.Tool.Digest)
			if ok || !enforce {
				return gate.Verdict{Kind: gate.Allow}
			}
			if err := g.events.Refused(g.server, contract.Tools, ci.Tool.Name, "sha256:"+ci.Tool.Digest, why); err != nil {
				log("lock events", "err", err)
			}
			return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{
				Code:    gate.CodeWithheld,
				Message: "mcpseal: tool " + contract.SafeName(ci.Tool.Name) + " is withheld by the lock (" + string(why) + "); not forwarded",
				Reason:  gate.ReasonWithheld,
				Extra:   map[string]any{"withheld": string(why)},
			}}
		},
	}
}

func (g *lockGate) close() error {
	if g == nil {
		return nil
	}
	return g.events.Close()
}

var errLockNeedsName = errors.New("--lock needs --name: the lock lists servers by name")
