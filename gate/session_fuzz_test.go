package gate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// A session script drives one gate Session from idle, both sides, one
// operation a line:
//
//	p POSTURE   (first line only) guard, strict or monitor
//	c FRAME     a frame from the client; $ask and $srv become the id of the
//	            oldest confirmation the gate asked and the oldest server
//	            request the client got
//	s FRAME     a frame from the server; $own and $req become the id of the
//	            oldest request of the gate's own and the oldest client
//	            request the server got
//	o JSON      the server answers the gate's oldest own request with JSON
//	e CODE      ... with an error of that code
//	r JSON      the server answers the oldest client request with JSON
//	a           an honest server answers everything it was asked
//	t SECONDS   time passes (default 60) and the gate's Tick runs
//	d           the oldest dispatched decision comes back
//	x           the server is gone (ServerClosed)
//	f c|s       a frame over the limit from the client or the server
//	! OP        the Event hook panics at the next event of that op (any
//	            op when none is named), as a broken audit sink would
//
// The honest server lists a fixed contract whose tools exercise every host
// decision: confirm_* asks a person, slow_* decides later, deny_* refuses,
// panic_* panics in the Call hook (the driver then fails the session as a
// transport does). Seeds live in testdata/sessions.

const fuzzPrefix = "mcpseal-test"

type fuzzDriver struct {
	t   testing.TB
	s   *gate.Session
	now time.Time

	own, req, asks, srv []pendingID
	// states are the requestStates of the gate's questions asked in
	// input_required answers ($state).
	states []pendingID
	later  []func() []gate.Out

	// Client request ids: may is how many answers each may get (every
	// frame with an id that is not a response), must how many a valid
	// request needs, answered how many it got.
	may, must, answered map[string]int
	// atServer counts, per id, the client requests the server got and
	// has not had answered to the client yet.
	atServer map[string]int
	// lists are the client's list requests' methods by id; ownMethods
	// the gate's own requests' methods by id, and ownPages how many
	// results the server gave the gate's own listings of each method: the
	// gate may answer as many of the client's listings with those pages,
	// each once (gate/pages.go).
	lists, ownMethods map[string]string
	ownPages          map[string]int

	failed bool // a step panicked and the session was failed
	// trap is the event op the Event hook panics at; trapped once armed.
	trap    string
	trapped bool
	phases  map[string]bool
	asked   bool // a confirmation reached the client
	ops     int
}

type pendingID struct {
	id     []byte
	method string
	params []byte
}

func newFuzzDriver(t testing.TB, posture pin.Posture) *fuzzDriver {
	d := &fuzzDriver{
		t: t, now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		may: map[string]int{}, must: map[string]int{}, answered: map[string]int{}, atServer: map[string]int{},
		lists: map[string]string{}, ownMethods: map[string]string{}, ownPages: map[string]int{},
		phases: map[string]bool{},
	}
	d.s = gate.New(gate.Config{
		Identity: pin.IdentityForName("fuzz"),
		Posture:  posture,
		Pins:     &memPins{},
		IDPrefix: fuzzPrefix,
		Now:      func() time.Time { return d.now },
		Limits:   gate.Limits{MaxQueued: 16, MaxHeld: 8, MaxPending: 16, MaxPages: 5, MaxDefinitions: 50, VerifyTimeout: 30 * time.Second},
		Hooks:    fuzzHooks(d),
		Dispatch: func(work func() gate.Verdict, resume func(gate.Verdict) []gate.Out) {
			d.later = append(d.later, func() []gate.Out { return resume(work()) })
		},
		ConfirmTimeout: time.Minute,
	})
	d.phases[d.s.PhaseName()] = true
	return d
}

func fuzzHooks(d *fuzzDriver) gate.Hooks {
	elicit := []byte(`{"message":"Allow this call?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}`)
	return gate.Hooks{
		Call: func(c gate.CallInfo) gate.Verdict {
			switch name := c.Tool.Name; {
			case strings.HasPrefix(name, "confirm_"):
				return gate.Verdict{Kind: gate.Confirm, Elicitation: elicit, Refusal: gate.Refusal{Code: -32012, Reason: "confirm-declined"}}
			case strings.HasPrefix(name, "slow_"):
				return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict {
					return gate.Verdict{Kind: gate.Allow, Timeout: 10 * time.Second}
				}}
			case strings.HasPrefix(name, "deny_"):
				return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: -32009, Reason: "denied"}}
			case strings.HasPrefix(name, "panic_"):
				panic("fuzz: a Call hook bug")
			}
			return gate.Verdict{Kind: gate.Allow, Timeout: 30 * time.Second}
		},
		Result: func(_ gate.CallInfo, result []byte) gate.Verdict {
			if bytes.Contains(result, []byte("withhold")) {
				return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: -32013, Reason: "output-schema"}}
			}
			return gate.Verdict{Kind: gate.Allow}
		},
		Shape: func(_ string, _ contract.Kind, defs []contract.Definition) []gate.Shape {
			out := make([]gate.Shape, len(defs))
			for i, d := range defs {
				switch {
				case strings.HasPrefix(d.Name, "hide"):
					out[i] = gate.Shape{Withhold: true, Reason: "denied"}
				case strings.HasPrefix(d.Name, "swap"):
					out[i] = gate.Shape{Replace: []byte(`{"name":"swap","description":"Host text.","inputSchema":{"type":"object"}}`)}
				}
			}
			return out
		},
		Instructions: func(_ string, instr *string) bool { return !strings.Contains(*instr, "drop") },
		Event: func(e gate.Event) {
			if d.trapped && (d.trap == "" || d.trap == e.Op) {
				d.trapped = false
				panic("fuzz: an Event hook bug")
			}
		},
		AfterConnect: func(profile string, _ *contract.Contract) gate.Verdict {
			switch {
			case strings.Contains(profile, "experimental"):
				return gate.Verdict{Kind: gate.Refuse, Refusal: gate.Refusal{Code: -32011, Reason: "local-refused"}}
			case strings.Contains(profile, "sampling"):
				return gate.Verdict{Kind: gate.Later, Work: func() gate.Verdict { return gate.Verdict{Kind: gate.Allow} }}
			}
			return gate.Verdict{Kind: gate.Allow}
		},
	}
}

// maxScriptLines bounds one script: longer ones explore nothing new and
// slow the fuzzer down.
const maxScriptLines = 64

// run plays a script; it fails the test on a broken invariant.
func (d *fuzzDriver) run(lines []string) {
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		op, arg, _ := strings.Cut(line, " ")
		d.ops++
		switch op {
		case "c":
			frame := []byte(d.subst(arg, "$ask", &d.asks))
			frame = []byte(d.subst(string(frame), "$srv", &d.srv))
			frame = []byte(d.subst(string(frame), "$state", &d.states))
			d.countClient(frame)
			d.step(gate.ToClient, frame, func() []gate.Out { return d.s.FromClient(frame) })
		case "s":
			frame := []byte(d.subst(arg, "$own", &d.own))
			frame = []byte(d.subst(string(frame), "$req", &d.req))
			d.fromServer(frame)
		case "o", "e", "r":
			list := &d.own
			if op == "r" {
				list = &d.req
			}
			if len(*list) == 0 {
				continue
			}
			p := (*list)[0]
			*list = (*list)[1:]
			var frame []byte
			if op == "e" {
				code, _ := strconv.Atoi(arg)
				frame = jsonrpc.NewError(p.id, code, "fuzz error", nil)
			} else {
				frame = jsonrpc.NewResult(p.id, []byte(arg))
			}
			d.fromServer(frame)
		case "a":
			d.honest()
		case "!":
			d.trap, d.trapped = arg, true
		case "t":
			n, err := strconv.Atoi(arg)
			if err != nil {
				n = 60
			}
			d.now = d.now.Add(time.Duration(n) * time.Second)
			d.step(gate.ToServer, nil, d.s.Tick)
		case "d":
			if len(d.later) > 0 {
				f := d.later[0]
				d.later = d.later[1:]
				d.step(gate.ToServer, nil, f)
			}
		case "x":
			d.step(gate.ToServer, nil, d.s.ServerClosed)
		case "f":
			side := gate.ToServer
			if arg == "c" {
				side = gate.ToClient
			}
			d.step(side, nil, func() []gate.Out { return d.s.FrameTooLarge(side, 1024) })
		}
	}
}

func (d *fuzzDriver) fromServer(frame []byte) {
	if m, err := jsonrpc.Peek(frame); err == nil && m.Kind == jsonrpc.Response && m.Result != nil {
		if method := d.ownMethods[jsonrpc.IDKey(m.ID)]; strings.HasSuffix(method, "/list") {
			d.ownPages[method]++
		}
	}
	d.step(gate.ToServer, frame, func() []gate.Out { return d.s.FromServer(frame) })
}

// subst replaces each placeholder with the next id of list.
func (d *fuzzDriver) subst(s, placeholder string, list *[]pendingID) string {
	parts := strings.Split(s, placeholder)
	var b strings.Builder
	for i, part := range parts {
		if i > 0 {
			id := []byte(`"none"`)
			if len(*list) > 0 {
				id = (*list)[0].id
				*list = (*list)[1:]
			}
			b.Write(id)
		}
		b.WriteString(part)
	}
	return b.String()
}

// countClient records the ids a client frame may and must be answered on.
func (d *fuzzDriver) countClient(frame []byte) {
	one := func(e []byte) {
		m, err := jsonrpc.Peek(e)
		if m.ID == nil || string(m.ID) == "null" || m.Kind == jsonrpc.Response {
			return
		}
		k := jsonrpc.IDKey(m.ID)
		if err == nil && m.Kind == jsonrpc.Request && strings.HasSuffix(m.Method, "/list") {
			d.lists[k] = m.Method
		}
		d.may[k]++
		if err == nil && m.Kind == jsonrpc.Request {
			d.must[k]++
		}
	}
	m, err := jsonrpc.Peek(frame)
	if err == nil && m.Kind == jsonrpc.Batch {
		elems, _ := jsonrpc.Elements(frame)
		for _, e := range elems {
			one(e)
		}
		return
	}
	one(frame)
}

// step runs one gate step as a transport does: a panic fails the session.
func (d *fuzzDriver) step(from gate.Side, frame []byte, f func() []gate.Out) {
	outs, panicked := func() (outs []gate.Out, panicked bool) {
		defer func() {
			if r := recover(); r != nil {
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "fuzz: ") {
					d.t.Fatalf("gate step panicked: %v\n%s", r, debug.Stack())
				}
				panicked = true
			}
		}()
		return f(), false
	}()
	if panicked {
		outs = d.s.Fail(from, frame)
		d.failed = true
	}
	d.deliver(outs)
	d.phases[d.s.PhaseName()] = true
}

func (d *fuzzDriver) deliver(outs []gate.Out) {
	verified := d.s.Status().Verified
	for _, o := range outs {
		m, err := jsonrpc.Peek(o.Frame)
		if err != nil {
			d.t.Fatalf("gate sent the %s an invalid frame %q: %v", o.To, o.Frame, err)
		}
		checkEnvelope(d.t, o)
		// The gate's own ids: its requests to the server carry the
		// session's prefix, its confirmations to the client ids of
		// their own ("mcpseal-ask-" and 128 random bits).
		own := bytes.HasPrefix(m.ID, []byte(`"`+fuzzPrefix+`-`)) || o.To == gate.ToClient && bytes.HasPrefix(m.ID, []byte(`"mcpseal-ask-`))
		if d.failed && (o.To == gate.ToServer || m.Kind != jsonrpc.Response || m.Error == nil) {
			d.t.Fatalf("a failed session sent the %s %q", o.To, o.Frame)
		}
		if o.To == gate.ToServer {
			handshake := m.Method == "initialize" || m.Method == "server/discover"
			if !verified && !own && !handshake && m.Method != "notifications/initialized" {
				d.t.Fatalf("before verification the server got %q", o.Frame)
			}
			if m.Kind == jsonrpc.Request {
				p := pendingID{id: m.ID, method: m.Method, params: m.Params}
				if own {
					d.own = append(d.own, p)
					d.ownMethods[jsonrpc.IDKey(m.ID)] = m.Method
				} else {
					d.req = append(d.req, p)
					d.atServer[jsonrpc.IDKey(m.ID)]++
				}
			}
			continue
		}
		switch m.Kind {
		case jsonrpc.Request:
			if own {
				d.asks = append(d.asks, pendingID{id: m.ID, method: m.Method})
				d.asked = true
			} else {
				d.srv = append(d.srv, pendingID{id: m.ID, method: m.Method})
			}
		case jsonrpc.Response:
			if string(m.ID) == "null" {
				continue
			}
			k := jsonrpc.IDKey(m.ID)
			if st, ok := gateQuestion(m.Result); ok && d.atServer[k] == 0 {
				// The gate's own question in a 2026-07-28 session: the
				// client may answer it by sending the call again.
				d.states = append(d.states, pendingID{id: st})
				d.asked = true
			} else if m.Result != nil && d.atServer[k] == 0 {
				method := d.lists[k]
				if d.ownPages[method] == 0 {
					d.t.Fatalf("client request %s got a result although the server never got it: %q", m.ID, o.Frame)
				}
				d.ownPages[method]-- // a kept page answers once
			}
			if m.Result != nil && d.atServer[k] > 0 {
				// Only results: the gate's error for another frame under
				// the same id (an invalid one, a collision) may come first.
				d.atServer[k]--
			}
			d.answered[k]++
			if d.answered[k] > d.may[k] {
				d.t.Fatalf("client request %s answered %d times, sent %d times; last answer %q", m.ID, d.answered[k], d.may[k], o.Frame)
			}
		}
	}
}

// finish ends the session and checks that every request was answered.
func (d *fuzzDriver) finish() {
	d.step(gate.ToServer, nil, d.s.ServerClosed)
	if !d.s.Status().Closed {
		d.t.Fatalf("session not closed after ServerClosed: %+v", d.s.Status())
	}
	for _, k := range sortedKeys(d.must) {
		if d.answered[k] < d.must[k] {
			d.t.Fatalf("client request %s sent %d times, answered %d times", k, d.must[k], d.answered[k])
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// honest answers, as a well-behaved server would, everything the server
// was asked, until the gate asks nothing more.
func (d *fuzzDriver) honest() {
	for range 50 {
		if len(d.own)+len(d.req) == 0 {
			return
		}
		var p pendingID
		if len(d.own) > 0 {
			p, d.own = d.own[0], d.own[1:]
		} else {
			p, d.req = d.req[0], d.req[1:]
		}
		d.fromServer(jsonrpc.NewResult(p.id, honestResult(p)))
	}
}

var honestTools = []string{
	toolWeather,
	`{"name":"confirm_delete","description":"Delete a file.","inputSchema":{"type":"object"}}`,
	`{"name":"slow_read","description":"Read slowly.","inputSchema":{"type":"object"}}`,
	`{"name":"deny_exec","description":"Run a command.","inputSchema":{"type":"object"}}`,
	`{"name":"panic_tool","description":"Trips the hook.","inputSchema":{"type":"object"}}`,
	`{"name":"hidden_tool","description":"Withheld by the host.","inputSchema":{"type":"object"}}`,
	`{"name":"swap_me","description":"Replaced by the host.","inputSchema":{"type":"object"}}`,
}

func honestResult(p pendingID) []byte {
	const caps = `{"tools":{"listChanged":true},"prompts":{},"resources":{}}`
	version := "2025-06-18"
	if v, ok := stringAt(p.params, "protocolVersion"); ok {
		version = v
	}
	switch p.method {
	case "initialize":
		return fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":%s,"serverInfo":{"name":"fuzz","version":"1"},"instructions":"Be helpful."}`, version, caps)
	case "server/discover":
		return fmt.Appendf(nil, `{"supportedVersions":["2026-07-28"],"capabilities":%s,"instructions":"Be helpful.","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fuzz","version":"1"}}}`, caps)
	case "tools/list":
		// Two pages: the cursor path is exercised in every round.
		if c, _ := stringAt(p.params, "cursor"); c == "p2" {
			return []byte(`{"tools":[` + strings.Join(honestTools[4:], ",") + `]}`)
		}
		return []byte(`{"tools":[` + strings.Join(honestTools[:4], ",") + `],"nextCursor":"p2"}`)
	case "prompts/list":
		return []byte(`{"prompts":[{"name":"greet","description":"Say hello."}]}`)
	case "resources/list":
		return []byte(`{"resources":[{"uri":"file:///a","name":"a"}]}`)
	case "resources/templates/list":
		return []byte(`{"resourceTemplates":[]}`)
	case "tools/call":
		return []byte(`{"content":[{"type":"text","text":"done"}]}`)
	}
	return []byte(`{}`)
}

func stringAt(obj []byte, key string) (string, bool) {
	if obj == nil {
		return "", false
	}
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return "", false
	}
	for _, m := range ms {
		if m.Key == key {
			v, err := jsonrpc.DecodeString(m.Value)
			return v, err == nil
		}
	}
	return "", false
}

func playScript(t testing.TB, script string) *fuzzDriver {
	lines := strings.Split(script, "\n")
	if len(lines) > maxScriptLines {
		lines = lines[:maxScriptLines]
	}
	posture := pin.Guard
	if len(lines) > 0 {
		if p, ok := strings.CutPrefix(lines[0], "p "); ok {
			if pp, err := pin.ParsePosture(p); err == nil {
				posture = pp
			}
			lines = lines[1:]
		}
	}
	d := newFuzzDriver(t, posture)
	d.run(lines)
	d.finish()
	return d
}

// sessionSeeds loads the seed scripts; a test that loads none fails.
func sessionSeeds(t testing.TB) map[string]string {
	paths, err := filepath.Glob(filepath.Join("testdata", "sessions", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no session scripts in testdata/sessions (%v)", err)
	}
	seeds := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds[filepath.Base(p)] = string(b)
	}
	return seeds
}

// FuzzGateSession drives a session from idle through both sides (see the
// script format above). The gate must never panic (but for the hooks that
// are made to), must send the server nothing but the handshake and its own
// requests before a contract verifies, must answer each client request at
// most once and, when the server is gone, every one of them, must deliver
// a result only for a request the server got; a failed session sends
// nothing but errors to the client.
func FuzzGateSession(f *testing.F) {
	for _, s := range sessionSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		playScript(t, script)
	})
}

// TestSessionSeedsReachEveryPhase proves the seeds put the fuzzer in every
// phase and down every host decision, so that mutations start from there.
func TestSessionSeedsReachEveryPhase(t *testing.T) {
	t.Parallel()
	phases := map[string]bool{}
	var asked, failed, dispatched bool
	for name, script := range sessionSeeds(t) {
		t.Run(name, func(t *testing.T) {
			d := playScript(t, script)
			for p := range d.phases {
				phases[p] = true
			}
			asked = asked || d.asked
			failed = failed || d.failed
			dispatched = dispatched || strings.Contains(script, "\nd")
		})
	}
	for _, p := range []string{"idle", "handshake", "listing", "open", "closed"} {
		if !phases[p] {
			t.Errorf("no seed reaches phase %s", p)
		}
	}
	if !asked || !failed || !dispatched {
		t.Errorf("seeds miss a host decision: confirmation asked %v, failed session %v, dispatch %v", asked, failed, dispatched)
	}
}

// gateQuestion reports whether result is the gate's own input_required
// question, and its requestState (raw).
func gateQuestion(result []byte) ([]byte, bool) {
	if !bytes.HasPrefix(result, []byte(`{"resultType":"input_required","inputRequests":{"mcpseal-confirm":`)) {
		return nil, false
	}
	i := bytes.LastIndex(result, []byte(`"requestState":`))
	if i < 0 {
		return nil, false
	}
	return bytes.TrimSuffix(result[i+len(`"requestState":`):], []byte("}")), true
}
