package launch

import (
	"fmt"
	"strings"
)

// EventKind names what the sandbox observed.
type EventKind string

const (
	// EventDeniedSyscall: the seccomp filter refused a system call
	// (Syscall names it). The server got EPERM.
	EventDeniedSyscall EventKind = "denied-syscall"
	// EventLimit: a limit was reached (Limit names it: a Limits JSON
	// member name). What happened is in Action.
	EventLimit EventKind = "limit"
	// EventEgressAllowed and EventEgressDenied: the egress proxy let a
	// CONNECT through or refused it (Host, Port).
	EventEgressAllowed EventKind = "egress-allowed"
	EventEgressDenied  EventKind = "egress-denied"
	// EventExit: the server's main process ended (Status or Signal), and
	// the sandbox's init ended everything it had left running (Orphans).
	EventExit EventKind = "exit"
)

// An Event is one observation. It holds names, numbers and fixed
// descriptions only: never server output, arguments or environment.
type Event struct {
	Kind    EventKind
	Syscall string // EventDeniedSyscall
	PID     int    // EventDeniedSyscall: the caller, as mcpseal's PID namespace numbers it
	Limit   string // EventLimit
	Value   int64  // EventLimit: the limit's value
	Action  string // EventLimit: "killed", "refused", "discarded"
	Host    string // EventEgress*
	Port    int    // EventEgress*
	Reason  string // EventEgressDenied, EventExit: a fixed description
	Status  int    // EventExit: exit status, -1 when killed by a signal
	Signal  string // EventExit: "SIGKILL"… when killed by a signal
	Orphans int    // EventExit: processes left behind and killed
	Count   int    // how many such events this one stands for (1 or more)
}

// String is the event as one line for stderr, without the "mcpseal: "
// prefix.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString("sandbox: ")
	switch e.Kind {
	case EventDeniedSyscall:
		fmt.Fprintf(&b, "denied system call %s", e.Syscall)
		if e.PID > 0 {
			fmt.Fprintf(&b, " (pid %d)", e.PID)
		}
	case EventLimit:
		fmt.Fprintf(&b, "limit %s (%d) reached: %s", e.Limit, e.Value, e.Action)
	case EventEgressAllowed:
		fmt.Fprintf(&b, "egress to %s:%d allowed", e.Host, e.Port)
	case EventEgressDenied:
		fmt.Fprintf(&b, "egress to %s:%d refused: %s", e.Host, e.Port, e.Reason)
	case EventExit:
		if e.Signal != "" {
			fmt.Fprintf(&b, "server killed by %s", e.Signal)
		} else {
			fmt.Fprintf(&b, "server exited with status %d", e.Status)
		}
		if e.Reason != "" {
			fmt.Fprintf(&b, " (%s)", e.Reason)
		}
		if e.Orphans > 0 {
			fmt.Fprintf(&b, "; %d process(es) it left running were killed", e.Orphans)
		}
	default:
		b.WriteString(string(e.Kind))
	}
	if e.Count > 1 {
		fmt.Fprintf(&b, " (%d times)", e.Count)
	}
	return b.String()
}
