package policy

import (
	"context"
	"errors"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// This file runs the three hooks. Each starts from the built-in
// provider's decision (the policy file, no I/O), then asks every external
// provider configured for the server and the stage, in the policy's
// order, reusing a cached decision until its expiry. The first refusal
// stops the round: no later provider is asked. Otherwise the most severe
// decision wins: require_confirmation over warn over allow. A provider
// that gives no usable decision (error, timeout, garbage, a receipt that
// fails verification) refuses.

// BeforeConnect runs before the server is started or any byte is sent.
// Refused: do not start the server; answer every client request with the
// refusal. Nobody can be asked at this point (nothing is known of the
// client yet), so a provider's require_confirmation is a refusal
// (confirm-unavailable): the verdict either proceeds or refuses.
func (ss *Session) BeforeConnect(ctx context.Context) Verdict {
	const stage = StageBeforeConnect
	if ss.sp.connect() == connectBlock {
		return refused(stage, &Refusal{Kind: KindPreflight, Reason: ReasonServerBlocked, Stage: stage, Provider: BuiltinProvider,
			Why:  "mcpseal: the host policy blocks server " + ss.server.Label + "; it was not started",
			Hint: "set \"connect\": \"allow\" for this server in the host policy"})
	}
	if ss.server.Transport == Stdio {
		switch ss.sp.local() {
		case localRefuse:
			return refused(stage, &Refusal{Kind: KindPreflight, Reason: ReasonLocalRefused, Stage: stage, Provider: BuiltinProvider,
				Why:  "mcpseal: the host policy refuses local servers such as " + ss.server.Label + "; it was not started",
				Hint: "set \"local\": \"pass\" for this server in the host policy"})
		case localPass:
			return Verdict{Stage: stage, Decision: Allow, Code: CodeLocalPass, Provider: BuiltinProvider}
		}
	}
	v, _ := ss.consult(ctx, stage, Subject{}, allowed(stage), false)
	if v.Decision == RequireConfirmation {
		return ss.NotConfirmed(v, ReasonConfirmUnavailable)
	}
	return v
}

// AfterConnect runs once the contract is listed and verified, with the
// verified contract. Refused: close the session; every waiting and later
// request gets the refusal.
func (ss *Session) AfterConnect(ctx context.Context, c *contract.Contract) Verdict {
	const stage = StageAfterConnect
	if !ss.asks(stage) {
		return allowed(stage)
	}
	sub := Subject{Contract: c.Digests().Contract, Definitions: []DefinitionRef{}}
	for _, k := range contract.Kinds {
		for _, d := range c.Defs[k] {
			sub.Definitions = append(sub.Definitions, DefinitionRef{Kind: k, Name: d.Name, Digest: d.Digest})
		}
	}
	v, _ := ss.consult(ctx, stage, sub, allowed(stage), false)
	return v
}

// BeforeToolCall runs before each tools/call of the verified tool def,
// after CheckCall. It never sees the arguments. Refused: answer the
// call with the refusal. RequireConfirmation: ask a person (confirm.go).
func (ss *Session) BeforeToolCall(ctx context.Context, def contract.Definition) Verdict {
	v, _ := ss.beforeToolCall(ctx, def, nil, false)
	return v
}

// BeforeDriftedToolCall is BeforeToolCall for a call under a contract the
// gate forwards although it drifted from its pin (the monitor posture).
// def is the tool as the server now declares it and pinned its pinned
// definition, nil when the pin has no such tool. A server must not be able
// to talk its way out of a confirmation by changing its contract, so
// confirm_destructive asks when either definition's annotations are risky,
// and always when the tool has no pinned definition.
func (ss *Session) BeforeDriftedToolCall(ctx context.Context, def contract.Definition, pinned *contract.Definition) Verdict {
	v, _ := ss.beforeToolCall(ctx, def, &drift{pinned: pinned}, false)
	return v
}

// QuickBeforeToolCall is BeforeToolCall without I/O: ok is false when a
// provider would have to be asked (no cached decision), and the gate
// should then run BeforeToolCall off its message loop.
func (ss *Session) QuickBeforeToolCall(def contract.Definition) (v Verdict, ok bool) {
	return ss.beforeToolCall(context.Background(), def, nil, true)
}

// QuickBeforeDriftedToolCall is BeforeDriftedToolCall without I/O, as
// QuickBeforeToolCall is BeforeToolCall.
func (ss *Session) QuickBeforeDriftedToolCall(def contract.Definition, pinned *contract.Definition) (v Verdict, ok bool) {
	return ss.beforeToolCall(context.Background(), def, &drift{pinned: pinned}, true)
}

// drift is what beforeToolCall knows of a call under a drifted contract:
// the tool's pinned definition, nil when it has none.
type drift struct{ pinned *contract.Definition }

// risky applies confirm_destructive: to the annotations of the verified
// definition and, under drift, to those of the pinned one as well (a tool
// with no pinned definition is risky).
func (d *drift) risky(annotations []byte) bool {
	if riskyAnnotations(annotations) {
		return true
	}
	return d != nil && (d.pinned == nil || riskyAnnotations(canonicalMember(d.pinned.Canonical, "annotations")))
}

// subject is what a provider is told of the drift, nil without one.
func (d *drift) subject() *ToolDrift {
	switch {
	case d == nil:
		return nil
	case d.pinned == nil:
		return &ToolDrift{}
	}
	return &ToolDrift{Pinned: true, Digest: d.pinned.Digest, Annotations: canonicalMember(d.pinned.Canonical, "annotations")}
}

func (ss *Session) beforeToolCall(ctx context.Context, def contract.Definition, d *drift, quick bool) (Verdict, bool) {
	const stage = StageBeforeToolCall
	tp := ss.sp.Tool(def.Name)
	if tp.Withheld {
		r := ss.accessRefusal(contract.SafeName(def.Name), tp.Reason)
		r.Stage = stage
		r.Provider = BuiltinProvider
		return refused(stage, r), true
	}
	base := allowed(stage)
	base.Tool = contract.SafeName(def.Name)
	base.Drifted = d != nil
	annotations := canonicalMember(def.Canonical, "annotations")
	switch {
	case tp.Subjects.Confirms(ss.sp.server.Who):
		base.Decision, base.Code = RequireConfirmation, CodeConfirmSubject
	case tp.Confirm != nil && *tp.Confirm:
		base.Decision, base.Code = RequireConfirmation, CodeConfirmPolicy
	case tp.Confirm == nil && tp.ConfirmDestructive && d.risky(annotations):
		base.Decision, base.Code = RequireConfirmation, CodeConfirmDestructive
	}
	sub := Subject{Tool: &ToolSubject{Name: def.Name, Digest: def.Digest, Annotations: annotations, Drift: d.subject()}}
	return ss.consult(ctx, stage, sub, base, quick)
}

func allowed(stage Stage) Verdict {
	return Verdict{Stage: stage, Decision: Allow, Code: CodeAllowed, Provider: BuiltinProvider}
}

func refused(stage Stage, r *Refusal) Verdict {
	return Verdict{Stage: stage, Decision: Block, Code: r.Reason, Provider: r.Provider, Tool: r.Tool, Receipt: r.Receipt, Refusal: r}
}

// consult asks the server's providers for stage, starting from the
// built-in verdict v. In quick mode it gives up (ok false) at the first
// provider without a cached decision.
func (ss *Session) consult(ctx context.Context, stage Stage, sub Subject, v Verdict, quick bool) (Verdict, bool) {
	ctx = hookContext(ctx)
	var subjectDigest string
	for _, name := range ss.sp.providerNames() {
		if !ss.c.policy.providers[name].stages[stage] {
			continue
		}
		if subjectDigest == "" {
			_, d, err := newRequest(stage, ss.server, sub, false).body()
			if err != nil {
				return refused(stage, ss.providerFailure(stage, name, sub, failed("the request could not be encoded"))), true
			}
			subjectDigest = d
		}
		key := cacheKey{provider: name, stage: stage, subject: subjectDigest}
		now := ss.c.now()
		a, ok := ss.cache.get(key, now)
		if !ok {
			if quick {
				return Verdict{}, false
			}
			p := ss.c.providers[name]
			var err error
			a, err = p.decide(ctx, newRequest(stage, ss.server, sub, p.local()), now)
			if err != nil {
				return refused(stage, ss.providerFailure(stage, name, sub, err)), true
			}
			ss.cache.put(key, a, now)
		}
		switch a.decision {
		case Block, Unsupported:
			return refused(stage, ss.providerRefusal(stage, name, sub, a)), true
		case Warn:
			if !ss.sp.AllowWarn() {
				r := ss.providerRefusal(stage, name, sub, a)
				r.Reason = ReasonWarnNotAllowed
				r.Hint = "set \"allow_warn\": true for this server in the host policy to proceed on warnings"
				return refused(stage, r), true
			}
			if v.Decision == Allow {
				v.Decision, v.Code, v.Provider, v.Receipt = Warn, CodeWarned, name, a.receipt
			}
		case RequireConfirmation:
			if v.Decision != RequireConfirmation {
				v.Decision, v.Code, v.Provider, v.Receipt = RequireConfirmation, CodeConfirmProvider, name, a.receipt
			}
		case Allow:
			if v.Decision == Allow {
				v.Provider, v.Receipt = name, a.receipt
			}
		}
	}
	return v, true
}

// asks reports whether any external provider decides stage for this
// server.
func (ss *Session) asks(stage Stage) bool {
	for _, name := range ss.sp.providerNames() {
		if ss.c.policy.providers[name].stages[stage] {
			return true
		}
	}
	return false
}

// subjectPhrase says, in mcpseal's words, what a stage decides about.
func (ss *Session) subjectPhrase(stage Stage, sub Subject) string {
	switch stage {
	case StageBeforeConnect:
		return "connecting to server " + ss.server.Label
	case StageAfterConnect:
		return "the session with server " + ss.server.Label
	}
	tool := "_"
	if sub.Tool != nil {
		tool = contract.SafeName(sub.Tool.Name)
	}
	return "the call of tool " + tool + " of server " + ss.server.Label
}

func (ss *Session) providerRefusal(stage Stage, name string, sub Subject, a answer) *Refusal {
	reason := ReasonProviderBlock
	if a.decision == Unsupported {
		reason = ReasonProviderUnsupported
	}
	why := "mcpseal: preflight provider " + name + " decided " + string(a.decision) + " for " + ss.subjectPhrase(stage, sub)
	if a.reason != "" {
		why += " (reason: " + a.reason + ")"
	}
	r := &Refusal{Kind: KindPreflight, Reason: reason, Stage: stage, Provider: name, Receipt: a.receipt, Why: why + "; refused"}
	if sub.Tool != nil {
		r.Tool = contract.SafeName(sub.Tool.Name)
	}
	return r
}

func (ss *Session) providerFailure(stage Stage, name string, sub Subject, err error) *Refusal {
	reason, detail := ReasonProviderFailed, "unknown failure"
	var pe *providerError
	if errors.As(err, &pe) {
		reason, detail = pe.reason, pe.detail
	}
	ss.c.log.Warn("preflight provider gave no usable decision: refusing", "provider", name, "stage", string(stage), "server", ss.server.ID, "reason", reason, "detail", detail)
	r := &Refusal{Kind: KindPreflight, Reason: reason, Stage: stage, Provider: name,
		Why: "mcpseal: preflight provider " + name + " gave no usable decision about " + ss.subjectPhrase(stage, sub) + " (" + reason + "); refused"}
	if sub.Tool != nil {
		r.Tool = contract.SafeName(sub.Tool.Name)
	}
	return r
}

// riskyAnnotations applies confirm_destructive to a pinned definition's
// annotations object (nil when absent), with MCP's defaults for absent
// hints (readOnlyHint false, destructiveHint true, openWorldHint true): a
// tool needs confirmation when destructiveHint is true, or when it is not
// read-only and either destructive or open-world. A hint that is not a
// boolean counts as absent.
//
// raw is a member of the definition's canonical form, so it is scanned
// without decoding (it runs on every call). Bytes that are not one object
// in canonical form count as no hints at all, which is the riskiest
// reading (FuzzRiskyAnnotations holds
// it to the decoder it replaced: the same answers on canonical bytes, and
// never less caution on any others).
func riskyAnnotations(raw []byte) bool {
	h := annotationHints(raw)
	hint := func(v []byte, def bool) bool {
		switch string(v) {
		case "true":
			return true
		case "false":
			return false
		}
		return def
	}
	readOnly := hint(h.readOnly, false)
	destructive := hint(h.destructive, true)
	openWorld := hint(h.openWorld, true)
	return string(h.destructive) == "true" || !readOnly && (destructive || openWorld)
}

// hints are the raw values of the annotations confirm_destructive reads.
type hints struct{ readOnly, destructive, openWorld []byte }

// annotationHints reads the hints of the annotations object c, which must
// be in canonical form (canon.IsCanonical): anything else has no hints.
// In canonical form a member name with an escape holds a '"', a '\\' or a
// control character, so it names no hint, and no name repeats.
func annotationHints(c []byte) hints {
	var h hints
	if len(c) < 2 || c[0] != '{' || !canon.IsCanonical(c) {
		return hints{}
	}
	if len(c) == 2 && c[1] == '}' {
		return h
	}
	for i := 1; ; {
		kEnd := skipJSONString(c, i)
		if kEnd < 0 || kEnd >= len(c) || c[kEnd] != ':' {
			return hints{}
		}
		vEnd := skipJSONValue(c, kEnd+1)
		if vEnd <= kEnd+1 || vEnd >= len(c) {
			return hints{}
		}
		var slot *[]byte
		switch string(c[i+1 : kEnd-1]) {
		case "readOnlyHint":
			slot = &h.readOnly
		case "destructiveHint":
			slot = &h.destructive
		case "openWorldHint":
			slot = &h.openWorld
		}
		if slot != nil {
			if *slot != nil {
				return hints{}
			}
			*slot = c[kEnd+1 : vEnd]
		}
		switch {
		case c[vEnd] == ',':
			i = vEnd + 1
		case c[vEnd] == '}' && vEnd == len(c)-1:
			return h
		default:
			return hints{}
		}
	}
}
