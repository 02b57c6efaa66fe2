package cli

import (
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
)

// TestComposedHooksAskBothDecisions: a call (or a session) composed of
// two hooks must pass both, whatever kind of verdict the first gives
// (known gap 16): a decision made later, then the second; a person's
// confirmation, then, on their yes only, the second, which inside the
// answer may only allow or refuse.
func TestComposedHooksAskBothDecisions(t *testing.T) {
	t.Parallel()
	allow := gate.Verdict{Kind: gate.Allow}
	refuseB := gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: -32009, Reason: "b"}}
	confirmA := gate.Verdict{Kind: gate.Confirm, Elicitation: []byte(`{}`), Refusal: gate.Refusal{Code: -32012, Reason: "confirm-declined"}}
	laterA := gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { return allow }}
	yes := []byte(`{"action":"accept","content":{"confirm":true}}`)
	no := []byte(`{"action":"decline"}`)
	compose := func(a, b gate.Verdict) gate.Verdict {
		h := composeHooks(gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { return a }}, gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { return b }})
		return h.Call(gate.CallInfo{})
	}
	if v := compose(allow, refuseB); v.Kind != gate.Refuse || v.Refusal.Reason != "b" {
		t.Errorf("allow then refuse: %+v", v)
	}
	if v := compose(laterA, refuseB); v.Kind != gate.Later || v.Work().Refusal.Reason != "b" {
		t.Errorf("later then refuse: the second was not asked after the first's work")
	}
	v := compose(confirmA, refuseB)
	if v.Kind != gate.Confirm || v.Answer == nil {
		t.Fatalf("confirm then refuse: %+v", v)
	}
	if w := v.Answer(yes); w.Kind != gate.Refuse || w.Refusal.Reason != "b" {
		t.Errorf("a yes did not ask the second: %+v", w)
	}
	if w := v.Answer(no); w.Kind != gate.Refuse || w.Refusal.Reason != "confirm-declined" || w.Refusal.Extra["why"] != "confirm-declined" {
		t.Errorf("a no: %+v", w)
	}
	if w := compose(confirmA, allow).Answer(yes); w.Kind != gate.Allow {
		t.Errorf("confirm then allow, yes: %+v", w)
	}
	if w := compose(confirmA, confirmA).Answer(yes); w.Kind != gate.Refuse || w.Refusal.Reason != "undecided" {
		t.Errorf("a second question inside the person's answer: %+v", w)
	}
	// Neither hook's bound on the call is lost: the shorter wins.
	short := gate.Verdict{Kind: gate.Allow, Timeout: time.Second}
	long := gate.Verdict{Kind: gate.Allow, Timeout: time.Minute}
	if v := compose(short, long); v.Timeout != time.Second {
		t.Errorf("allow(1s) then allow(1m): timeout %v", v.Timeout)
	}
	if v := compose(long, gate.Verdict{Kind: gate.Allow}); v.Timeout != time.Minute {
		t.Errorf("allow(1m) then allow: timeout %v", v.Timeout)
	}
	confirmT := confirmA
	confirmT.Answer = func([]byte) gate.Verdict { return short }
	if w := compose(confirmT, long).Answer(yes); w.Kind != gate.Allow || w.Timeout != time.Second {
		t.Errorf("confirm, yes(1s), then allow(1m): %+v", w)
	}
	h := composeHooks(
		gate.Hooks{AfterConnect: func(string, *contract.Contract) gate.Verdict { return allow }},
		gate.Hooks{AfterConnect: func(string, *contract.Contract) gate.Verdict { return refuseB }})
	if v := h.AfterConnect("p", nil); v.Kind != gate.Refuse {
		t.Errorf("after_connect: the second hook was dropped: %+v", v)
	}
}
