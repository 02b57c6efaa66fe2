package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/policy"
)

// JSON-RPC codes of the host policy's refusals, by kind (docs/error-codes.md).
const (
	codePolicy    = -32009 // the host policy refused the call
	codeSchema    = -32010 // the arguments violate the pinned inputSchema
	codePreflight = -32011 // a preflight decision refused the connection, session or call
	codeConfirm   = -32012 // confirmation was required and no person said yes
	codeResult    = -32013 // the result was withheld (output schema, size)
)

// loadPolicy reads --policy FILE, or $MCPSEAL_HOME/policy.json when it
// exists; nil with no file means the contract check alone decides.
func loadPolicy(e *env, path string) (*policy.Policy, error) {
	if path != "" {
		return policy.Load(path)
	}
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return nil, err
	}
	p, err := policy.LoadDefault(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return p, err
}

// policyGate is the host policy as gate hooks, for one session.
type policyGate struct {
	ss  *policy.Session
	log *slog.Logger
	// allowed caches, by tool digest, the verdict that lets a call of the
	// tool through with its timeout refusal: the same for every call, and
	// building it per call (maps, strings) cost more than the decision.
	mu      sync.Mutex
	allowed map[string]gate.Verdict
	// base, when set, is the contract calls are judged against as the
	// pin's is under a drift: the team lock's approved definitions, when
	// the lock does not enforce them (posture monitor) and so lets a
	// changed or unapproved tool be called.
	base *contract.Contract
}

// askProviders runs the before_tool_call hook of ci off the gate's loop,
// for a provider must be asked. A function of its own, so that only a call
// that needs it copies ci to the heap.
func (pg *policyGate) askProviders(ci gate.CallInfo) gate.Verdict {
	return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict {
		if ci.Drifted {
			return pg.callVerdict(ci, pg.ss.BeforeDriftedToolCall(context.Background(), ci.Tool, ci.Pinned))
		}
		return pg.callVerdict(ci, pg.ss.BeforeToolCall(context.Background(), ci.Tool))
	}}
}

// lockDrift reports whether def differs from the lock's approved
// definition (base) and, if the lock has one, that definition.
func (pg *policyGate) lockDrift(def contract.Definition) (bool, *contract.Definition) {
	d, ok := pg.base.Lookup(contract.Tools, def.Name)
	switch {
	case !ok:
		return true, nil
	case d.Digest != def.Digest:
		return true, &d
	}
	return false, nil
}

func newPolicyGate(p *policy.Policy, id pin.Identity, argv []string, url string, identityChecked bool, who *policy.Who, log *slog.Logger) *policyGate {
	chk := policy.NewChecker(p, policy.Options{Logger: log})
	srv := policy.Server{ID: id.ID, Label: id.Label, Transport: policy.Stdio, Command: argv}
	if url != "" {
		srv = policy.Server{ID: id.ID, Label: id.Label, Transport: policy.HTTP, URL: url}
	}
	srv.IdentityChecked, srv.Who = identityChecked, who
	ss := chk.Session(srv)
	return &policyGate{ss: ss, log: log}
}

// beforeConnect asks the before_connect hook; a non-nil refusal means the
// server must not start.
func (pg *policyGate) beforeConnect() *gate.Refusal {
	v := pg.ss.BeforeConnect(context.Background())
	if v.Refusal == nil {
		return nil
	}
	r := toGateRefusal(v.Refusal)
	return &r
}

func (pg *policyGate) hooks() gate.Hooks {
	ss := pg.ss
	return gate.Hooks{
		Shape: func(profile string, kind contract.Kind, defs []contract.Definition) []gate.Shape {
			if kind != contract.Tools {
				return nil
			}
			out := make([]gate.Shape, len(defs))
			for i, d := range defs {
				l, err := ss.Listing(d)
				switch {
				case err != nil:
					pg.log.Warn("host policy could not judge a tool: withheld", "tool", contract.SafeName(d.Name), "err", err)
					out[i] = gate.Shape{Withhold: true, Reason: "policy-error"}
				case l.Withheld:
					out[i] = gate.Shape{Withhold: true, Reason: l.Reason}
				case l.Definition != nil:
					out[i] = gate.Shape{Replace: l.Definition}
				}
			}
			return out
		},
		Call: func(ci gate.CallInfo) gate.Verdict {
			if r := ss.CheckCall(ci.Tool, ci.Params); r != nil {
				return refuse(r)
			}
			if !ci.Drifted && pg.base != nil {
				ci.Drifted, ci.Pinned = pg.lockDrift(ci.Tool)
			}
			// Under a drift monitor forwarded, the pinned definition
			// counts too.
			var (
				v  policy.Verdict
				ok bool
			)
			if ci.Drifted {
				v, ok = ss.QuickBeforeDriftedToolCall(ci.Tool, ci.Pinned)
			} else {
				v, ok = ss.QuickBeforeToolCall(ci.Tool)
			}
			if ok {
				return pg.callVerdict(ci, v)
			}
			return pg.askProviders(ci)
		},
		Result: func(ci gate.CallInfo, result []byte) gate.Verdict {
			if r := ss.CheckResult(ci.Tool, result); r != nil {
				return refuse(r)
			}
			return gate.Verdict{Kind: gate.Allow}
		},
		CallError: func(ci gate.CallInfo, rpcError []byte) gate.Verdict {
			if r := ss.CheckError(ci.Tool, rpcError); r != nil {
				return refuse(r)
			}
			return gate.Verdict{Kind: gate.Allow}
		},
		AfterConnect: func(profile string, c *contract.Contract) gate.Verdict {
			return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict {
				v := ss.AfterConnect(context.Background(), c)
				if v.Decision == policy.RequireConfirmation {
					// Nobody can be asked before the session opens.
					v = ss.NotConfirmed(v, policy.ReasonConfirmUnavailable)
				}
				if v.Refusal != nil {
					return refuse(v.Refusal)
				}
				return gate.Verdict{Kind: gate.Allow}
			}}
		},
	}
}

// callVerdict turns a before_tool_call verdict into the gate's.
func (pg *policyGate) callVerdict(ci gate.CallInfo, v policy.Verdict) gate.Verdict {
	ss := pg.ss
	switch {
	case v.Refusal != nil:
		return refuse(v.Refusal)
	case v.Decision == policy.RequireConfirmation:
		declined := ss.NotConfirmed(v, policy.ReasonConfirmDeclined)
		r := gate.Refusal{Code: codeConfirm, Message: "mcpseal: the call needs a person's confirmation and did not get it; not forwarded", Reason: policy.ReasonConfirmDeclined}
		if declined.Refusal != nil {
			r = toGateRefusal(declined.Refusal)
		}
		allow := pg.allowVerdict(ci)
		answer := func(result []byte) gate.Verdict {
			if out := ss.Confirmed(v, result); out.Refusal != nil {
				return refuse(out.Refusal)
			}
			return allow
		}
		return gate.Verdict{Kind: gate.Confirm, Elicitation: ss.ConfirmationParams(v), Refusal: r, Answer: answer}
	}
	return pg.allowVerdict(ci)
}

// allowVerdict lets a call through with the host's bound on its result.
func (pg *policyGate) allowVerdict(ci gate.CallInfo) gate.Verdict {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if v, ok := pg.allowed[ci.Tool.Digest]; ok {
		return v
	}
	ss := pg.ss
	v := gate.Verdict{Kind: gate.Allow, Timeout: ss.Tool(ci.Tool.Name).Limits.CallTimeout, TimeoutRefusal: toGateRefusal(ss.CallTimeoutRefusal(ci.Tool))}
	if pg.allowed == nil || len(pg.allowed) >= maxAllowedCache {
		pg.allowed = make(map[string]gate.Verdict)
	}
	pg.allowed[ci.Tool.Digest] = v
	return v
}

// maxAllowedCache bounds allowVerdict's cache: one entry per verified tool.
const maxAllowedCache = 4096

func refuse(r *policy.Refusal) gate.Verdict {
	return gate.Verdict{Kind: gate.Refuse, Refusal: toGateRefusal(r)}
}

// toGateRefusal maps a policy refusal to the JSON-RPC error the gate
// answers with. Every string in it is mcpseal's own words, a code, a safe
// name or a digest (policy.Refusal's contract).
func toGateRefusal(r *policy.Refusal) gate.Refusal {
	code := codePolicy
	switch r.Kind {
	case policy.KindSchema:
		code = codeSchema
	case policy.KindPreflight:
		code = codePreflight
	case policy.KindConfirm:
		code = codeConfirm
	case policy.KindWithheld:
		code = codeResult
	}
	extra := map[string]any{}
	for k, v := range map[string]string{"stage": string(r.Stage), "why": r.Why, "pointer": r.Pointer, "keyword": r.Keyword, "provider": r.Provider, "hint": r.Hint} {
		if v != "" {
			extra[k] = v
		}
	}
	if r.Receipt != nil {
		extra["receipt"] = r.Receipt
	}
	msg := r.Why
	if msg == "" {
		msg = fmt.Sprintf("mcpseal: refused by the host policy (%s)", r.Reason)
	}
	return gate.Refusal{Code: code, Message: msg, Reason: r.Reason, Extra: extra}
}

// composeHooks applies a's decisions, then b's: a definition either
// withholds stays withheld, a call must pass both, b's text replaces.
// chainAnswerChecks is a then b, for the hooks that check a call's answer
// (Result, CallError): the first that does not allow decides. Either may
// be nil.
func chainAnswerChecks(a, b func(gate.CallInfo, []byte) gate.Verdict) func(gate.CallInfo, []byte) gate.Verdict {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ci gate.CallInfo, answer []byte) gate.Verdict {
		if v := a(ci, answer); v.Kind != gate.Allow {
			return v
		}
		return b(ci, answer)
	}
}

// thenVerdict is the verdict of a decision made of two, v first and then
// next, which must both let it through (known gap 16): a refusal of v
// decides; v's allow asks next; v's Later decides later, then asks next;
// v's Confirm asks the person, and their yes asks next, whose answer must
// then be an allow or a refusal (a second question, or a decision later,
// inside the person's answer is refused: fail closed).
func thenVerdict(v gate.Verdict, next func() gate.Verdict) gate.Verdict {
	switch v.Kind {
	case gate.Allow:
		return tighter(next(), v)
	case gate.Later:
		if v.Work == nil {
			return v // the gate refuses it as undecided
		}
		work := v.Work
		v.Work = func() gate.Verdict { return thenVerdict(work(), next) }
		return v
	case gate.Confirm:
		answer := v.Answer
		refusal := v.Refusal
		v.Answer = func(result []byte) gate.Verdict {
			var yes gate.Verdict
			if answer != nil {
				yes = answer(result)
			} else if why := policy.ConfirmationAnswer(result); why == "" {
				yes = gate.Verdict{Kind: gate.Allow}
			} else {
				yes = gate.Verdict{Kind: gate.Refuse, Refusal: refusal}
				yes.Refusal.Extra = map[string]any{"why": why}
				for k, x := range refusal.Extra {
					if k != "why" {
						yes.Refusal.Extra[k] = x
					}
				}
			}
			if yes.Kind != gate.Allow {
				return yes
			}
			w := next()
			switch w.Kind {
			case gate.Allow:
				return tighter(w, yes)
			case gate.Refuse:
				return w
			}
			return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: codePolicy, Message: "mcpseal: the call needs a second decision after the person's answer, which cannot be made; not forwarded", Reason: "undecided"}}
		}
		return v
	}
	return v
}

// tighter is the allow w with the shorter of its and first's call
// timeouts (zero: none), so neither hook's bound on the call is lost.
func tighter(w, first gate.Verdict) gate.Verdict {
	if w.Kind == gate.Allow && first.Timeout > 0 && (w.Timeout == 0 || first.Timeout < w.Timeout) {
		w.Timeout, w.TimeoutRefusal = first.Timeout, first.TimeoutRefusal
	}
	return w
}

func composeHooks(a, b gate.Hooks) gate.Hooks {
	out := b
	if a.Shape != nil && b.Shape != nil {
		out.Shape = func(profile string, kind contract.Kind, defs []contract.Definition) []gate.Shape {
			sa, sb := a.Shape(profile, kind, defs), b.Shape(profile, kind, defs)
			merged := make([]gate.Shape, len(defs))
			for i := range defs {
				switch {
				case i < len(sa) && sa[i].Withhold:
					merged[i] = sa[i]
				case i < len(sb):
					merged[i] = sb[i]
				case i < len(sa):
					merged[i] = sa[i]
				}
			}
			return merged
		}
	} else if a.Shape != nil {
		out.Shape = a.Shape
	}
	if a.Instructions != nil && b.Instructions != nil {
		out.Instructions = func(p string, in *string) bool { return a.Instructions(p, in) && b.Instructions(p, in) }
	} else if a.Instructions != nil {
		out.Instructions = a.Instructions
	}
	if a.Call != nil && b.Call != nil {
		out.Call = func(ci gate.CallInfo) gate.Verdict {
			v := a.Call(ci)
			if v.Kind == gate.Allow {
				// thenVerdict's first case, without the closure it would
				// allocate on every call.
				return tighter(b.Call(ci), v)
			}
			later := ci
			return thenVerdict(v, func() gate.Verdict { return b.Call(later) })
		}
	} else if a.Call != nil {
		out.Call = a.Call
	}
	out.Result = chainAnswerChecks(a.Result, b.Result)
	out.CallError = chainAnswerChecks(a.CallError, b.CallError)
	if a.AfterConnect != nil && b.AfterConnect != nil {
		out.AfterConnect = func(profile string, c *contract.Contract) gate.Verdict {
			return thenVerdict(a.AfterConnect(profile, c), func() gate.Verdict { return b.AfterConnect(profile, c) })
		}
	} else if a.AfterConnect != nil {
		out.AfterConnect = a.AfterConnect
	}
	if a.Event != nil && b.Event != nil {
		out.Event = func(ev gate.Event) { a.Event(ev); b.Event(ev) }
	} else if a.Event != nil {
		out.Event = a.Event
	}
	return out
}
