package cli

import (
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// clockHooks times the call gate's hooks that run on a call's path (the
// call, its result, the events) into c (MCPSEAL_PATHCLOCK); with no clock
// it returns h as it is.
func clockHooks(h gate.Hooks, c *pathclock.Clock) gate.Hooks {
	if c == nil {
		return h
	}
	if call := h.Call; call != nil {
		h.Call = func(ci gate.CallInfo) gate.Verdict {
			t0 := time.Now()
			defer c.Call.Since(t0)
			return call(ci)
		}
	}
	if result := h.Result; result != nil {
		h.Result = func(ci gate.CallInfo, r []byte) gate.Verdict {
			t0 := time.Now()
			defer c.Result.Since(t0)
			return result(ci, r)
		}
	}
	if event := h.Event; event != nil {
		h.Event = func(ev gate.Event) {
			t0 := time.Now()
			defer c.Event.Since(t0)
			event(ev)
		}
	}
	return h
}
