package cli

import (
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/policy"
)

// TestAttackRequiredAuditForwardsCallsWhileDatabaseHangs: the host policy
// requires the audit log and the audit log is the state database. The
// database stops answering without closing its connections (a hung host,
// a partition, a firewall that drops): an append then waits the whole
// pgstate.Timeout (10 s) before it fails. For all that time every call
// is allowed and forwarded, and the batch that finally fails (holding
// those calls' events) is dropped: calls happened that no log records.
// runaudit.go promises the refusal "within auditGather" (50 ms) of a
// failure; with files an append fails at once, with the database only
// after 10 s.
func TestAttackRequiredAuditForwardsCallsWhileDatabaseHangs(t *testing.T) {
	t.Parallel()
	// A "database" that accepts connections and never says anything.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	dsn := "postgres://mcpseal@127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/mcpseal?sslmode=disable"
	pol, err := policy.Parse("policy.json", []byte(`{"version": 1, "audit": {"required": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
		if k == "MCPSEAL_HOME" {
			return home
		}
		return ""
	}}
	sink, err := openAudit(e, pol, pin.IdentityForName("victim"), slog.New(slog.DiscardHandler), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.close()
	h := sink.hooks()
	// A call is decided and its event queued: the sink now tries to
	// write it to the hung database.
	start := time.Now()
	sink.gateEvent(gate.Event{Op: "call", Name: "delete_everything", Outcome: "allowed"})
	// Calls go on while the first batch gathers (auditGather) and its
	// append is not yet overdue (auditStall); after that every call is
	// refused, long before the database's own 10 s timeout.
	late := 0
	for time.Since(start) < auditGather+auditStall+1500*time.Millisecond {
		if v := h.Call(gate.CallInfo{}); v.Kind == gate.Allow {
			if time.Since(start) > auditGather+auditStall+250*time.Millisecond {
				late++
			}
			sink.gateEvent(gate.Event{Op: "call", Name: "delete_everything", Outcome: "allowed"})
		}
		time.Sleep(50 * time.Millisecond)
	}
	if late > 0 {
		t.Fatalf("%d calls allowed after the append was overdue, while the audit log (the database) could not record any of them", late)
	}
}
