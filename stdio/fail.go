package stdio

import (
	"runtime/debug"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A panic in a gate step (a bug in mcpseal or in a host hook) must neither
// kill the process silently nor leave the client waiting. The proxy runs
// every step through gateStep; when one panics, the panic is logged with
// its stack (never message content), the session is failed (gate.Fail
// answers every request it still knows with gate.CodeInternal), nothing
// more is forwarded either way, client requests that arrive while the
// proxy stops get the same error, and Run returns with Result.Failed set
// (`mcpseal run` exits with its own status). If gate.Fail panics too, the
// client gets one error with a null id, and the proxy stops all the same:
// closing its stdout ends every request still waiting.

// gateStep runs one gate step; failed reports that it panicked (logged).
func (p *proxy) gateStep(step func() []gate.Out) (outs []gate.Out, failed bool) {
	defer func() {
		if r := recover(); r != nil {
			gate.LogPanic(p.log, "gate step", r, debug.Stack())
			outs, failed = nil, true
		}
	}()
	return step(), false
}

// runWork runs a slow decision off the lock; ok is false when it panicked
// (logged).
func (p *proxy) runWork(work func() gate.Verdict) (v gate.Verdict, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			gate.LogPanic(p.log, "dispatched decision", r, debug.Stack())
			ok = false
		}
	}()
	return work(), true
}

// fail closes the session whose step panicked while handling frame (from
// the side from names, as gate.FrameTooLarge does). It returns only frames
// for the client.
func (p *proxy) fail(g *gate.Session, from gate.Side, frame []byte, nullErr []byte) (outs []gate.Out) {
	defer func() {
		if r := recover(); r != nil {
			gate.LogPanic(p.log, "failing the session", r, debug.Stack())
			outs = []gate.Out{{To: gate.ToClient, Frame: nullErr}}
		}
	}()
	for _, o := range g.Fail(from, frame) {
		if o.To == gate.ToClient {
			outs = append(outs, o)
		}
	}
	return outs
}

// answerFailed answers a client request that arrives after the session
// failed, without the gate (its state is not trusted any more).
func answerFailed(g *gate.Session, frame []byte) []gate.Out {
	var outs []gate.Out
	one := func(f []byte) {
		if m, err := jsonrpc.Peek(f); err == nil && m.Kind == jsonrpc.Request {
			outs = append(outs, gate.Out{To: gate.ToClient, Frame: g.InternalError(m.ID)})
		}
	}
	m, err := jsonrpc.Peek(frame)
	if err == nil && m.Kind == jsonrpc.Batch {
		elems, _ := jsonrpc.Elements(frame)
		for _, e := range elems {
			one(e)
		}
		return outs
	}
	one(frame)
	return outs
}
