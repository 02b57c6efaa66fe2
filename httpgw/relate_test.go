package httpgw

import (
	"testing"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// TestServerCannotSteerNotificationsIntoAnotherExchange: in the shared
// 2026-07-28 session the server sees every caller's request ids (as the
// gateway rewrote them). A notification tagged with a subscription id
// reaches the subscriptions/listen exchange of that id, and no other: a
// server naming the id of a caller's waiting tools/call does not get its
// notification into that caller's answer stream (threat model, gap 26).
func TestServerCannotSteerNotificationsIntoAnotherExchange(t *testing.T) {
	t.Parallel()
	listen := newExchange(false, true)
	listen.listen = true
	call := newExchange(false, true)
	k1, k2 := jsonrpc.IDKey([]byte(`"g-1"`)), jsonrpc.IDKey([]byte(`"g-2"`))
	s := &session{
		modern:  true,
		waiting: map[string]*exchange{k1: listen, k2: call},
		restore: map[string][]byte{k1: []byte(`7`), k2: []byte(`8`)},
		tokens:  map[string]*exchange{},
		untoken: map[string][]byte{},
	}
	note := func(sub string) (*exchange, []byte) {
		frame := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + sub + `}}}`)
		m, err := jsonrpc.Peek(frame)
		if err != nil {
			t.Fatal(err)
		}
		return s.target(m, frame)
	}
	if ex, frame := note(`"g-1"`); ex != listen || string(frame) != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}` {
		t.Errorf("the listen's own notification: exchange %p (listen %p), frame %s", ex, listen, frame)
	}
	if ex, _ := note(`"g-2"`); ex != nil {
		t.Errorf("a notification naming a waiting tools/call's id was routed into its answer stream")
	}
}
