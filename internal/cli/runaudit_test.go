package cli

import (
	"testing"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/gate"
)

// TestRequiredAuditRefusesCallsOnceBroken: when the policy requires the
// audit log and an event could not be written, calls are refused.
func TestRequiredAuditRefusesCallsOnceBroken(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{true, false} {
		a := &auditSink{ch: make(chan audit.Event, 1), required: required}
		h := a.hooks()
		if required && h.Call == nil {
			t.Fatal("no call hook when the audit log is required")
		}
		if h.Call != nil {
			if v := h.Call(gate.CallInfo{}); v.Kind != gate.Allow {
				t.Errorf("required=%v: refused before any failure", required)
			}
		}
		a.broken.Store(true)
		if h.Call != nil {
			if v := h.Call(gate.CallInfo{}); v.Kind != gate.Refuse || v.Refusal.Reason != "audit-unavailable" {
				t.Errorf("required=%v: verdict %+v after a failure", required, v)
			}
		} else if required {
			t.Error("required audit log without a call hook")
		}
	}
}
