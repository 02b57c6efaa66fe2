package gate_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// mrtrHarness is a 2026-07-28 session whose Call hook asks a person
// before every call, with its listing done.
func mrtrHarness(t *testing.T, events *[]gate.Event) (*harness, *fakeServer) {
	t.Helper()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	srv.manual["tools/call"] = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) {
		c.ConfirmTimeout = time.Minute
		c.Hooks.Call = func(gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Confirm, Elicitation: []byte(`{"message":"mcpseal: allow?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`),
				Refusal: gate.Refusal{Code: -32012, Message: "mcpseal: not confirmed", Reason: "confirm-declined"}}
		}
		if events != nil {
			c.Hooks.Event = func(e gate.Event) { *events = append(*events, e) }
		}
	})
	if got := h.client(modernReq(1, "tools/list", `{"elicitation":{}}`, "")); len(got) != 1 {
		t.Fatalf("modern listing: %q", got)
	}
	return h, srv
}

// question sends a tools/call and returns the requestState of the gate's
// input_required question that answers it.
func question(t *testing.T, h *harness, id int, extra string) string {
	t.Helper()
	got := h.client(modernReq(id, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"}`+extra))
	if len(got) != 1 {
		t.Fatalf("call %d: client got %q", id, got)
	}
	var m struct {
		Result struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[0]), &m); err != nil || m.Result.ResultType != "input_required" {
		t.Fatalf("call %d: not an input_required answer: %s", id, got[0])
	}
	q, ok := m.Result.InputRequests["mcpseal-confirm"]
	if !ok || q.Method != "elicitation/create" || !strings.Contains(string(q.Params), "mcpseal: allow?") || !strings.HasPrefix(m.Result.RequestState, "mcpseal-state-") {
		t.Fatalf("call %d: the gate's question: %s", id, got[0])
	}
	return m.Result.RequestState
}

// retry sends the call again with the person's answer.
func retry(h *harness, id int, args, state, answer, extra string) []string {
	return h.client(modernReq(id, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":`+args+`,"requestState":`+strconv.Quote(state)+`,"inputResponses":{"mcpseal-confirm":`+answer+`}`+extra))
}

const yes = `{"action":"accept","content":{"confirm":true}}`

// TestModernConfirmationAskedInTheAnswer: in a 2026-07-28 session the gate
// asks the person through an input_required answer (multi round-trip), as
// the protocol has no server-to-client requests. The call reaches the
// server only on the retry that carries the gate's state and an explicit
// yes, and without the gate's members.
func TestModernConfirmationAskedInTheAnswer(t *testing.T) {
	t.Parallel()
	var events []gate.Event
	h, srv := mrtrHarness(t, &events)
	state := question(t, h, 10, "")
	if n := len(srv.pendingManual); n != 0 {
		t.Fatalf("the server got the call before the person answered: %d", n)
	}
	if got := retry(h, 11, `{"city":"Oslo"}`, state, yes, ""); len(got) != 0 {
		t.Fatalf("the confirmed retry was answered by the gate: %q", got)
	}
	if len(srv.pendingManual) != 1 {
		t.Fatalf("the confirmed retry did not reach the server")
	}
	fwd := srv.pendingManual[0]
	if string(fwd.ID) != "11" || strings.Contains(string(fwd.Params), "requestState") || strings.Contains(string(fwd.Params), "inputResponses") || !strings.Contains(string(fwd.Params), `"arguments":{"city":"Oslo"}`) {
		t.Errorf("forwarded: id %s params %s", fwd.ID, fwd.Params)
	}
	answer := `{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"sunny"}]}}`
	if got := h.serverSays(answer); len(got) != 1 || got[0] != answer {
		t.Errorf("the result: %q", got)
	}
	var ops []string
	for _, e := range events {
		if e.Op == "confirm" {
			ops = append(ops, e.Outcome)
		}
	}
	if strings.Join(ops, ",") != "asked,accepted" {
		t.Errorf("confirm events: %v", ops)
	}
}

// TestModernConfirmationCannotBeForgedOrReused: the retry is refused, and
// never forwarded, when its state was never given, was used already, is
// past confirm_timeout, or comes with other arguments; a decline or a
// form left at its default refuses with the policy's refusal.
func TestModernConfirmationCannotBeForgedOrReused(t *testing.T) {
	t.Parallel()
	h, srv := mrtrHarness(t, nil)
	check := func(what string, got []string, code int, why string) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("%s: client got %q", what, got)
		}
		c, data := errorOf(t, got[0])
		var extra struct {
			Error struct {
				Data struct {
					Why string `json:"why"`
				} `json:"data"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(got[0]), &extra)
		if c != code || why != "" && extra.Error.Data.Why != why {
			t.Errorf("%s: code %d reason %q why %q, want %d %q", what, c, data.Reason, extra.Error.Data.Why, code, why)
		}
	}
	check("a made-up state", retry(h, 20, `{"city":"Oslo"}`, "mcpseal-state-00112233445566778899aabbccddeeff", yes, ""), gate.CodeRefused, "confirmation-unknown")
	check("a made-up state in another case", retry(h, 21, `{"city":"Oslo"}`, "MCPSEAL-state-x", yes, ""), gate.CodeRefused, "confirmation-unknown")

	st := question(t, h, 22, "")
	check("other arguments", retry(h, 23, `{"city":"Bergen"}`, st, yes, ""), gate.CodeRefused, "confirmation-mismatch")
	check("the same state again", retry(h, 24, `{"city":"Oslo"}`, st, yes, ""), gate.CodeRefused, "confirmation-unknown")

	st = question(t, h, 25, "")
	check("a decline", retry(h, 26, `{"city":"Oslo"}`, st, `{"action":"decline"}`, ""), -32012, "")
	st = question(t, h, 27, "")
	check("the form's default", retry(h, 28, `{"city":"Oslo"}`, st, `{"action":"accept","content":{"confirm":false}}`, ""), -32012, "")
	st = question(t, h, 29, "")
	check("no answer", h.client(modernReq(30, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"},"requestState":`+strconv.Quote(st))), -32012, "")

	st = question(t, h, 31, "")
	h.now = h.now.Add(2 * time.Minute)
	check("too late", retry(h, 32, `{"city":"Oslo"}`, st, yes, ""), -32012, "confirmation-timeout")

	st = question(t, h, 33, "")
	check("a repeated requestState", h.client(modernReq(34, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"},"requestState":"x","requestState":`+strconv.Quote(st)+`,"inputResponses":{"mcpseal-confirm":`+yes+`}`)), -32602, "")
	check("a case variant of the answer's key", retry(h, 35, `{"city":"Oslo"}`, st, yes+`,"MCPSEAL-CONFIRM":{"action":"decline"}`, ""), -32012, "")
	if n := len(srv.pendingManual); n != 0 {
		t.Errorf("a refused retry reached the server: %d calls", n)
	}
	// Same arguments in another order and spacing are the same arguments.
	st = question(t, h, 36, "")
	if got := retry(h, 37, `{ "city" : "Oslo" }`, st, yes, ""); len(got) != 0 || len(srv.pendingManual) != 1 {
		t.Errorf("a retry with the arguments written differently: %q", got)
	}
}

// TestModernConfirmationKeepsTheServersOwnRound: a call that carries the
// server's own requestState and inputResponses (the server asked first)
// and needs the person's confirmation reaches the server, once confirmed,
// with the server's members, not the gate's.
func TestModernConfirmationKeepsTheServersOwnRound(t *testing.T) {
	t.Parallel()
	h, srv := mrtrHarness(t, nil)
	serverRound := `,"requestState":"srv-1","inputResponses":{"city":{"action":"accept","content":{"city":"Oslo"}}}`
	st := question(t, h, 40, serverRound)
	if got := retry(h, 41, `{"city":"Oslo"}`, st, yes, ""); len(got) != 0 || len(srv.pendingManual) != 1 {
		t.Fatalf("the confirmed retry: %q", got)
	}
	var p struct {
		RequestState   string                     `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	fwd := srv.pendingManual[0].Params
	if err := json.Unmarshal(fwd, &p); err != nil || p.RequestState != "srv-1" || len(p.InputResponses) != 1 || p.InputResponses["city"] == nil {
		t.Errorf("forwarded params %s", fwd)
	}
	if err := jsonrpc.CheckUnique(fwd); err != nil {
		t.Errorf("forwarded params repeat a member: %s", fwd)
	}
}

// TestServerStateInTheGatesSpaceWithheld: a server's input_required answer
// whose requestState is in the gate's space would have the client's retry
// taken for the answer to the gate's question: withheld as a look-alike.
func TestServerStateInTheGatesSpaceWithheld(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	srv.manual["tools/call"] = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv)
	h.client(modernReq(1, "tools/list", "{}", ""))
	h.client(modernReq(2, "tools/call", "{}", `"name":"get_weather","arguments":{}`))
	got := h.serverSays(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"City?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"Mcpseal-state-1"}}`)
	if len(got) != 1 {
		t.Fatalf("client got %q", got)
	}
	if code, data := errorOf(t, got[0]); code != gate.CodeRefused || data.Reason != gate.ReasonLookAlike {
		t.Errorf("code %d reason %q", code, data.Reason)
	}
}

// TestModernConfirmationQuestionsBounded: questions wait for retries that
// need never come, each holding its call's params. One caller of the
// gateway's shared session may have at most 16 waiting, so it cannot take
// every place from the others (sixth red team, 2026-12-02).
func TestModernConfirmationQuestionsBounded(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	srv.manual["tools/call"] = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) {
		c.CallerOf = func(request string) *gate.Caller {
			if strings.HasPrefix(request, "n:9") { // ids 900 and up
				return &gate.Caller{Subject: "alice", Issuer: "idp", JTIDigest: "sha256:" + request}
			}
			return &gate.Caller{Subject: "mallory", Issuer: "idp", JTIDigest: "sha256:" + request}
		}
		c.Hooks.Call = func(gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Confirm, Elicitation: []byte(`{"message":"mcpseal: allow?"}`), Refusal: gate.Refusal{Code: -32012, Reason: "confirm-declined"}}
		}
	})
	h.client(modernReq(1, "tools/list", `{"elicitation":{}}`, ""))
	for i := range 16 {
		question(t, h, 100+i, "")
	}
	got := h.client(modernReq(140, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"}`))
	if code, data := errorOf(t, got[0]); code != gate.CodeRefused || data.Reason != gate.ReasonQueueFull {
		t.Errorf("mallory's 17th waiting question: code %d reason %q", code, data.Reason)
	}
	// Alice is still asked, and her token's jti may change in between.
	st := question(t, h, 900, "")
	if got := retry(h, 901, `{"city":"Oslo"}`, st, yes, ""); len(got) != 0 || len(srv.pendingManual) != 1 {
		t.Errorf("alice's confirmed retry (a new jti): %q", got)
	}
}

// TestModernConfirmationForwardsTheCallAskedAbout: a yes forwards the
// call the person was asked about, as it was sent, with the retry's _meta:
// not arguments that only equal it as doubles, nor members the retry
// added (sixth red team, 2026-12-02).
func TestModernConfirmationForwardsTheCallAskedAbout(t *testing.T) {
	t.Parallel()
	h, srv := mrtrHarness(t, nil)
	got := h.client(modernReq(10, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo","account":12345678901234567890}`))
	var q struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if len(got) != 1 || json.Unmarshal([]byte(got[0]), &q) != nil || q.Result.RequestState == "" {
		t.Fatalf("question: %q", got)
	}
	if got := retry(h, 11, `{"city":"Oslo","account":12345678901234567891}`, q.Result.RequestState, yes, `,"dryRun":false`); len(got) != 0 || len(srv.pendingManual) != 1 {
		t.Fatalf("retry: %q", got)
	}
	fwd := string(srv.pendingManual[0].Params)
	if !strings.Contains(fwd, `12345678901234567890`) || strings.Contains(fwd, `67891`) || strings.Contains(fwd, "dryRun") || !strings.Contains(fwd, `"_meta":{`) {
		t.Errorf("forwarded %s", fwd)
	}
}

// TestModernConfirmationUnansweredIsAudited: a question nobody answers is
// reported, at its confirm_timeout, as a confirmation refused.
func TestModernConfirmationUnansweredIsAudited(t *testing.T) {
	t.Parallel()
	var events []gate.Event
	h, _ := mrtrHarness(t, &events)
	question(t, h, 10, "")
	if d := h.s.Deadline(); d.IsZero() || d.After(h.now.Add(time.Minute)) {
		t.Errorf("deadline %v: the question's timeout is not in it", d)
	}
	h.now = h.now.Add(2 * time.Minute)
	events = nil
	h.pump(h.s.Tick())
	if len(events) != 1 || events[0].Op != "confirm" || events[0].Outcome != "refused" || events[0].Request == "" {
		t.Errorf("events at the timeout: %+v", events)
	}
}

// TestModernConfirmationCoversTheServersNextRound: the server answers the
// confirmed call with a question of its own; the call sent again with the
// server's answer and state is not put to the person a second time — once
// (sixth red team: a multi-round server asked the person every round).
func TestModernConfirmationCoversTheServersNextRound(t *testing.T) {
	t.Parallel()
	asks := 0
	h, srv := mrtrHarness(t, nil)
	st := question(t, h, 10, "")
	asks++
	retry(h, 11, `{"city":"Oslo"}`, st, yes, "")
	got := h.serverSays(`{"jsonrpc":"2.0","id":11,"result":{"resultType":"input_required","inputRequests":{"unit":{"method":"elicitation/create","params":{"message":"Unit?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"srv-2"}}`)
	if len(got) != 1 || !strings.Contains(got[0], `"srv-2"`) {
		t.Fatalf("the server's round: %q", got)
	}
	next := `,"requestState":"srv-2","inputResponses":{"unit":{"action":"accept","content":{"u":"C"}}}`
	if got := h.client(modernReq(12, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"}`+next)); len(got) != 0 || len(srv.pendingManual) != 2 {
		t.Fatalf("the server's next round was put to the person again: %q", got)
	}
	if !strings.Contains(string(srv.pendingManual[1].Params), `"srv-2"`) {
		t.Errorf("forwarded %s", srv.pendingManual[1].Params)
	}
	// The round is used up: the same state again, or another call under
	// it, is asked about.
	question(t, h, 13, next)
	got = h.client(modernReq(14, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Bergen"},"requestState":"srv-2"`))
	if len(got) != 1 || !strings.Contains(got[0], "mcpseal-confirm") {
		t.Errorf("another call under a used round: %q", got)
	}
}

// TestModernConfirmationServerRoundsBounded: one yes covers the server's
// later rounds of that call (the same arguments) as the person approved
// it — its params as sent, not the retry's — for at most 8 rounds and within confirm_timeout of the
// yes; past either the person is asked again (eighth red team,
// 2026-12-02). Without authentication (stdio) there is no per-caller
// bound of 16 questions.
func TestModernConfirmationServerRoundsBounded(t *testing.T) {
	t.Parallel()
	h, srv := mrtrHarness(t, nil)
	st := question(t, h, 10, "")
	retry(h, 11, `{"city":"Oslo"}`, st, yes, "")
	id := 11
	round := func(args string) []string {
		t.Helper()
		state := "srv-" + strconv.Itoa(id)
		got := h.serverSays(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"message":"Unit?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"` + state + `"}}`)
		if len(got) != 1 {
			t.Fatalf("round after %d: %q", id, got)
		}
		id++
		return h.client(modernReq(id, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":`+args+`,"requestState":"`+state+`","inputResponses":{"u":{"action":"accept","content":{}}},"dryRun":true`))
	}
	for r := 1; r <= 8; r++ {
		if got := round(`{ "city": "Oslo" }`); len(got) != 0 {
			t.Fatalf("round %d was put to the person: %q", r, got)
		}
		fwd := string(srv.pendingManual[len(srv.pendingManual)-1].Params)
		if !strings.Contains(fwd, `"arguments":{"city":"Oslo"}`) || strings.Contains(fwd, "dryRun") || !strings.Contains(fwd, `"requestState":"srv-`) || !strings.Contains(fwd, `"inputResponses":{"u"`) {
			t.Fatalf("round %d forwarded %s, not the approved call with the server's round", r, fwd)
		}
	}
	if got := round(`{"city":"Oslo"}`); len(got) != 1 || !strings.Contains(got[0], "mcpseal-confirm") {
		t.Errorf("a ninth round was not put to the person: %q", got)
	}
	// Within the time of the yes only.
	st = question(t, h, 100, "")
	id = 101
	retry(h, id, `{"city":"Oslo"}`, st, yes, "")
	h.now = h.now.Add(2 * time.Minute)
	if got := round(`{"city":"Oslo"}`); len(got) != 1 || !strings.Contains(got[0], "mcpseal-confirm") {
		t.Errorf("a round past confirm_timeout of the yes was not put to the person: %q", got)
	}
	// No caller identity: more than 16 questions may wait.
	for i := range 20 {
		question(t, h, 200+i, "")
	}
}

// TestModernConfirmationKeepsTheCallTimeout: the answer's allow carries
// the host policy's call timeout (the policy's Confirm verdict does not);
// a call confirmed through input_required is bounded by it as a legacy
// confirmation is (the tenth red team: it ran unbounded).
func TestModernConfirmationKeepsTheCallTimeout(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(toolWeather)
	srv.modern = true
	srv.manual["tools/call"] = true
	h := newHarness(t, t.TempDir(), pin.Guard, srv, func(c *gate.Config) {
		c.ConfirmTimeout = time.Minute
		c.Hooks.Call = func(gate.CallInfo) gate.Verdict {
			return gate.Verdict{Kind: gate.Confirm, Elicitation: []byte(`{"message":"mcpseal: allow?"}`),
				Refusal: gate.Refusal{Code: -32012, Reason: "confirm-declined"},
				Answer: func([]byte) gate.Verdict {
					return gate.Verdict{Kind: gate.Allow, Timeout: 30 * time.Second, TimeoutRefusal: gate.Refusal{Code: -32013, Message: "mcpseal: too slow", Reason: "call-timeout"}}
				}}
		}
	})
	h.client(modernReq(1, "tools/list", `{"elicitation":{}}`, ""))
	st := question(t, h, 10, "")
	if got := retry(h, 11, `{"city":"Oslo"}`, st, yes, ""); len(got) != 0 || len(srv.pendingManual) != 1 {
		t.Fatalf("retry: %q", got)
	}
	timedOut := func(what string) {
		t.Helper()
		h.now = h.now.Add(31 * time.Second)
		got := h.pump(h.s.Tick())
		if len(got) != 1 {
			t.Fatalf("%s: past the call timeout the client got %q", what, got)
		}
		if code, data := errorOf(t, got[0]); code != -32013 || data.Reason != "call-timeout" {
			t.Errorf("%s: code %d reason %q", what, code, data.Reason)
		}
	}
	// The server answers with a round of its own first: its next round,
	// forwarded without asking, is bounded too.
	h.serverSays(`{"jsonrpc":"2.0","id":11,"result":{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"message":"Unit?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"srv-1"}}`)
	if got := h.client(modernReq(12, "tools/call", `{"elicitation":{}}`, `"name":"get_weather","arguments":{"city":"Oslo"},"requestState":"srv-1","inputResponses":{"u":{"action":"accept","content":{}}}`)); len(got) != 0 || len(srv.pendingManual) != 2 {
		t.Fatalf("the server's next round: %q", got)
	}
	timedOut("the server's next round")
	st = question(t, h, 20, "")
	retry(h, 21, `{"city":"Oslo"}`, st, yes, "")
	timedOut("the confirmed call")
}
