package telemetry

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// reuseModel is what one request of a random session should be exported
// as, kept by the test beside the session.
type reuseModel struct {
	serial    int
	id        int
	tool      string
	proto     string // at the call's decision
	client    bool   // carries a traceparent naming its serial as the parent
	state     string // its tracestate
	forwarded bool
	answer    string // "", "ok", "err": the server's
	confirm   string // "", "asked", then the outcome, or "dropped"
	end       string // the span's expected attributes (attrsOf) once ended
	status    tracepb.Status_StatusCode
}

// clientParent is the parent span id a request with serial n names.
func clientParent(n int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n)+1)
	return hex.EncodeToString(b[:])
}

// TestRedTeamReusedRequestsKeepTheirOwnSpans: a long random session with
// few ids (so that ended requests are reused at once for the next under
// the same or another id), interleaved calls of a few tools, answers,
// server errors, mcpseal's refusals, cancellations, repeated ids,
// confirmations, late answers, protocol changes that clear the shapes,
// client trace contexts with trace state and sampled or unsampled flags,
// and Close with requests in flight. Every request span exported must be
// the one its request's own history gives: name, attributes, status,
// parent (a client's span id, unique per request), trace state, upstream
// child and its status, confirmation child and its outcome.
func TestRedTeamReusedRequestsKeepTheirOwnSpans(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			reuseRound(t, seed, 1)
		})
	}
}

// TestRedTeamReusedRequestsRaceAcrossGoroutines: the same random
// sessions, with the steps of disjoint sets of ids taken on several
// goroutines at once (as the HTTP gateway's give-ups, the upstream
// writer's UpstreamHeaders and Close come from goroutines of their own),
// while the batcher's loop and flushes export. Run with -race.
func TestRedTeamReusedRequestsRaceAcrossGoroutines(t *testing.T) {
	t.Parallel()
	for seed := range uint64(3) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			reuseRound(t, seed, 4)
		})
	}
}

func reuseRound(t *testing.T, seed uint64, workers int) {
	var (
		mu  sync.Mutex
		all []*reuseModel
	)
	spans := tracedSession(t, func(s *Session) {
		h := s.Hooks(gate.Hooks{Call: func(gate.CallInfo) gate.Verdict { return gate.Verdict{Kind: gate.Allow} }})
		stop := make(chan struct{})
		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			for {
				select {
				case <-stop:
					return
				default:
					_ = s.t.spans.ForceFlush(context.Background())
				}
			}
		}()
		var wg sync.WaitGroup
		var transport sync.Mutex
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := reuseWorker(t, s, h, &transport, seed, w, workers)
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		close(stop)
		<-flushed
		_ = s.Close()
	})
	checkReuse(t, spans, all)
}

// reuseWorker takes the random steps of ids w*10 to w*10+5 on s and
// returns the requests it made, as they should be exported once the
// session closes.
func reuseWorker(t *testing.T, s *Session, h gate.Hooks, lk *sync.Mutex, seed uint64, w, workers int) []*reuseModel {
	rng := rand.New(rand.NewPCG(seed, 99+uint64(w)))
	var all []*reuseModel
	pending := map[int]*reuseModel{}
	proto := ""
	{
		attrs := func(m *reuseModel, outcome string, extra ...string) string {
			kv := []string{"gen_ai.operation.name=execute_tool", "gen_ai.tool.name=" + m.tool, "mcp.method.name=tools/call", "mcp.session.id=SESSION", "mcpseal.outcome=" + outcome}
			if m.proto != "" {
				kv = append(kv, "mcp.protocol.version="+m.proto)
			}
			kv = append(kv, extra...)
			slices.Sort(kv)
			return strings.Join(kv, ";")
		}
		ended := func(m *reuseModel, outcome string, st tracepb.Status_StatusCode, extra ...string) {
			m.end, m.status = attrs(m, outcome, extra...), st
			if m.confirm == "asked" {
				m.confirm = "dropped"
			}
			delete(pending, m.id)
		}
		frame := func(m *reuseModel) string {
			meta := ""
			if m.client {
				flags := "01"
				if m.serial%3 == 0 {
					flags = "00"
				}
				meta = `{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-` + clientParent(m.serial) + `-` + flags + `","tracestate":"` + m.state + `"}`
			}
			return callFrame(m.id, m.tool, meta)
		}
		for step := 0; step < 3000; step++ {
			id := w*10 + rng.IntN(6)
			m := pending[id]
			key := jsonrpc.IDKey([]byte(strconv.Itoa(id)))
			op := rng.IntN(12)
			// A step of the gate's is taken under the transport's lock;
			// a give-up (Cancelled) and the upstream writer's headers
			// come from goroutines of their own.
			if op != 7 && op != 10 {
				lk.Lock()
			}
			switch {
			case op < 3 && m == nil: // a new call
				m = &reuseModel{serial: w*100000 + len(all), id: id, tool: "tool" + strconv.Itoa(rng.IntN(4)), proto: proto, client: rng.IntN(2) == 0}
				m.state = "rt=s" + strconv.Itoa(m.serial)
				all = append(all, m)
				pending[id] = m
				took(t, s, frame(m))
			case op < 3: // the same id again while in flight: refused
				s.Took(gate.ToClient, peeked(t, callFrame(id, "tool9", "")))
				delivered(s, refusalFrame(id, gate.ReasonIDCollision))
			case op == 3 && m != nil && !m.forwarded && m.confirm == "":
				m.confirm = "asked"
				h.Event(gate.Event{Op: "confirm", Outcome: "asked", Kind: contract.Tools, Name: m.tool, Request: key})
			case op == 3 && m != nil && m.confirm == "asked":
				m.confirm = []string{"accepted", "declined"}[rng.IntN(2)]
				h.Event(gate.Event{Op: "confirm", Outcome: m.confirm, Kind: contract.Tools, Name: m.tool, Request: key})
			case op == 4 && m != nil && !m.forwarded:
				m.forwarded = true
				forwarded(s, frame(m))
			case op == 5 && m != nil && m.forwarded && m.answer == "":
				m.answer = []string{"ok", "err"}[rng.IntN(2)]
				if m.answer == "ok" {
					answered(t, s, resultFrame(id))
				} else {
					answered(t, s, errorFrame(id, -32603, ""))
				}
			case op == 6 && m != nil: // the answer to the client
				switch m.answer {
				case "ok":
					delivered(s, resultFrame(id))
					ended(m, "ok", unset)
				case "err":
					delivered(s, errorFrame(id, -32603, ""))
					ended(m, "error", failed, "error.type=-32603", "rpc.response.status_code=-32603")
				default:
					delivered(s, errorFrame(id, -32021, "call-timeout"))
					ended(m, "refused", failed, "error.type=-32021", "mcpseal.refusal.code=call-timeout", "rpc.response.status_code=-32021")
				}
			case op == 7 && m != nil:
				s.Cancelled(key, "token-expired")
				ended(m, "refused", failed, "mcpseal.refusal.code=token-expired")
			case op == 8 && m == nil: // a late answer to an ended request
				answered(t, s, resultFrame(id))
				if tp, _ := s.UpstreamHeaders([]byte(strconv.Itoa(id))); tp != "" {
					t.Errorf("step %d: upstream headers %q for id %d, not in flight", step, tp, id)
					lk.Unlock()
					return nil
				}
			case op == 9 && workers == 1 && rng.IntN(40) == 0: // the protocol changes: the shapes are cleared
				proto = "2025-0" + strconv.Itoa(rng.IntN(9)+1) + "-18"
				took(t, s, `{"jsonrpc":"2.0","id":"re","method":"initialize","params":{}}`)
				forwarded(s, `{"jsonrpc":"2.0","id":"re","method":"initialize","params":{}}`)
				answered(t, s, `{"jsonrpc":"2.0","id":"re","result":{"protocolVersion":"`+proto+`"}}`)
				delivered(s, `{"jsonrpc":"2.0","id":"re","result":{}}`)
			case op == 10 && m != nil && m.forwarded && m.answer == "":
				// The transport names the upstream span while the request is
				// in flight: it must be this request's.
				tp, ts := s.UpstreamHeaders([]byte(strconv.Itoa(id)))
				if m.client && (!strings.Contains(tp, "-4bf92f3577b34da6a3ce929d0e0e4736-") || ts != m.state) {
					t.Errorf("step %d: upstream headers %q %q of request %d (state %q)", step, tp, ts, m.serial, m.state)
					return nil
				}
			}
			if op != 7 && op != 10 {
				lk.Unlock()
			}
		}
		for _, m := range pending {
			m.end, m.status = attrs(m, "unanswered"), unset
			if m.confirm == "asked" {
				m.confirm = "dropped"
			}
		}
	}
	return all
}

// checkReuse fails unless the request spans exported are exactly those
// of the requests all, each with its own attributes, parent, trace state
// and children.
func checkReuse(t *testing.T, spans []*tracepb.Span, all []*reuseModel) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	children := map[string][]*tracepb.Span{}
	for _, sp := range spans {
		byID[hex.EncodeToString(sp.SpanId)] = sp
		children[hex.EncodeToString(sp.ParentSpanId)] = append(children[hex.EncodeToString(sp.ParentSpanId)], sp)
	}
	describe := func(name, attrs string, st tracepb.Status_StatusCode, state string, kids []string) string {
		slices.Sort(kids)
		return fmt.Sprintf("%s {%s} %v state=%q children=%v", name, attrs, st, state, kids)
	}
	want := map[string][]string{} // by parent: the client's span id, or "session"
	for _, m := range all {
		var kids []string
		if m.forwarded {
			st := unset
			if m.answer == "err" {
				st = failed
			}
			kids = append(kids, describe(upstreamName, "mcp.method.name=tools/call", st, "", nil))
		}
		switch m.confirm {
		case "":
		case "dropped":
			kids = append(kids, describe("mcpseal.confirm", "gen_ai.tool.name="+m.tool, unset, "", nil))
		default:
			kids = append(kids, describe("mcpseal.confirm", "gen_ai.tool.name="+m.tool+";mcpseal.outcome="+m.confirm, unset, "", nil))
		}
		parent, state := "session", ""
		if m.client {
			parent, state = clientParent(m.serial), m.state
		}
		want[parent] = append(want[parent], describe("tools/call "+m.tool, m.end, m.status, state, kids))
	}
	got := map[string][]string{}
	for _, sp := range spans {
		if !strings.HasPrefix(sp.Name, "tools/call") {
			continue
		}
		var kids []string
		for _, c := range children[hex.EncodeToString(sp.SpanId)] {
			state := c.TraceState
			if state == sp.TraceState {
				state = "" // the parent's, as it should be
			}
			kids = append(kids, describe(c.Name, attrsOf(c), c.Status.GetCode(), state, nil))
		}
		parent := hex.EncodeToString(sp.ParentSpanId)
		if p := byID[parent]; p != nil && p.Name == "mcpseal.session" {
			parent = "session"
		}
		got[parent] = append(got[parent], describe(sp.Name, attrsOf(sp), sp.Status.GetCode(), sp.TraceState, kids))
	}
	if len(all) < 100 {
		t.Fatalf("only %d requests", len(all))
	}
	for parent, w := range want {
		g := got[parent]
		slices.Sort(w)
		slices.Sort(g)
		if !slices.Equal(g, w) {
			t.Errorf("requests under %s:\n got %q\nwant %q", parent, g, w)
		}
	}
	for parent, g := range got {
		if want[parent] == nil {
			t.Errorf("spans under %s no request had: %q", parent, g)
		}
	}
}

// TestRedTeamSpanLimitsFromTheEnvironment: with OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT
// and OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT set (to a small count, to 0,
// negative), the request and upstream spans a session exports (their
// attributes encoded once per shape, or at the end) carry what an SDK span
// given the same attributes under the same limits carries: the same kept
// attributes, cut the same, and the same count of dropped ones.
func TestRedTeamSpanLimitsFromTheEnvironment(t *testing.T) {
	for _, c := range []struct{ count, length string }{{"3", "4"}, {"0", "-1"}, {"-1", "0"}, {"-7", "-3"}, {"128", "2"}} {
		t.Run(c.count+","+c.length, func(t *testing.T) {
			t.Setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", c.count)
			t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", c.length)
			spans := tracedSession(t, func(s *Session) {
				for id, answer := range []string{resultFrame(0), errorFrame(1, -32603, "")} {
					took(t, s, callFrame(id, "echo", ""))
					forwarded(s, callFrame(id, "echo", ""))
					answered(t, s, answer)
					delivered(s, answer)
				}
			})
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithRawSpanLimits(sdktrace.NewSpanLimits()))
			var sid string
			for _, sp := range spans {
				if sp.Name == "mcpseal.session" {
					for _, kv := range sp.Attributes {
						if kv.Key == attrSession {
							sid = kv.Value.GetStringValue()
						}
					}
				}
			}
			want := map[string]string{}
			for _, kvs := range [][]attribute.KeyValue{
				{attribute.String(attrMethod, "tools/call"), attribute.String(attrSession, sid), attribute.String(attrTool, "echo"), attribute.String(attrOperation, "execute_tool"), attribute.String(attrOutcome, "ok")},
				{attribute.String(attrMethod, "tools/call"), attribute.String(attrSession, sid), attribute.String(attrTool, "echo"), attribute.String(attrOperation, "execute_tool"), attribute.String(attrOutcome, "error"),
					attribute.String(attrStatus, "-32603"), attribute.String(attrErrorType, "-32603")},
				{attribute.String(attrMethod, "tools/call")},
			} {
				_, sp := tp.Tracer(tracerName).Start(context.Background(), "x")
				sp.SetAttributes(kvs...)
				sp.End()
			}
			for i, sd := range rec.Ended() {
				var kv []string
				for _, a := range sd.Attributes() {
					kv = append(kv, string(a.Key)+"="+a.Value.AsString())
				}
				want[[]string{"ok", "error", "upstream"}[i]] = fmt.Sprintf("%q dropped %d", kv, sd.DroppedAttributes())
			}
			seen := 0
			for _, sp := range spans {
				kind := ""
				switch {
				case sp.Name == upstreamName:
					kind = "upstream"
				case sp.Name == "tools/call echo" && sp.Status.GetCode() == failed:
					kind = "error"
				case sp.Name == "tools/call echo":
					kind = "ok"
				default:
					continue
				}
				seen++
				var kv []string
				for _, a := range sp.Attributes {
					kv = append(kv, a.Key+"="+a.Value.GetStringValue())
				}
				if got := fmt.Sprintf("%q dropped %d", kv, sp.DroppedAttributesCount); got != want[kind] {
					t.Errorf("%s span: %s, the SDK's %s", kind, got, want[kind])
				}
			}
			if seen != 4 {
				t.Errorf("%d request and upstream spans, want 4", seen)
			}
		})
	}
}

// TestRedTeamManyDistinctToolsStayBounded: a session calls 10,000 tools
// of distinct (random) names, more than maxShapes: the shapes kept stay
// bounded, and every request span exported (those beyond the cache built
// per call) is named after its own tool and carries its own attributes.
func TestRedTeamManyDistinctToolsStayBounded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	var shapes int
	spans := tracedSession(t, func(s *Session) {
		for i := range 10000 {
			tool := "t" + strconv.FormatUint(rng.Uint64(), 36)
			took(t, s, callFrame(i%5, tool, ""))
			forwarded(s, callFrame(i%5, tool, ""))
			answered(t, s, resultFrame(i%5))
			delivered(s, resultFrame(i%5))
		}
		s.mu.Lock()
		shapes = len(s.shapes)
		s.mu.Unlock()
	})
	if shapes > maxShapes {
		t.Errorf("%d span shapes kept, bound %d", shapes, maxShapes)
	}
	n := 0
	for _, sp := range spans {
		if !strings.HasPrefix(sp.Name, "tools/call ") {
			continue
		}
		n++
		tool := strings.TrimPrefix(sp.Name, "tools/call ")
		if want := strings.Replace(callAttrs, "=echo;", "="+tool+";", 1) + "mcpseal.outcome=ok"; attrsOf(sp) != want {
			t.Fatalf("span %q: %s", sp.Name, attrsOf(sp))
		}
	}
	if n < 2048 {
		t.Errorf("only %d of 10000 request spans exported", n)
	}
}

// TestRedTeamEveryEncodedSpanIsExportedOrCounted: request spans (with and
// without upstream spans) end on several goroutines into a small queue,
// while flushes and the loop export, then Shutdown runs beside more
// flushes: every span is either exported, once, or reported dropped.
func TestRedTeamEveryEncodedSpanIsExportedOrCounted(t *testing.T) {
	t.Parallel()
	exp := &encodingExporter{own: noLimits}
	h := &handled{}
	b := newSpanBatcher(exp, h.handle, noLimits.limits, time.Millisecond, 64, 500)
	tel := samplingOnly(t)
	stop := make(chan struct{})
	var flushers sync.WaitGroup
	for range 2 {
		flushers.Add(1)
		go func() {
			defer flushers.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_ = b.ForceFlush(context.Background())
				}
			}
		}()
	}
	var enders sync.WaitGroup
	var ended atomic.Int64
	for w := range 4 {
		enders.Add(1)
		go func() {
			defer enders.Done()
			for i := range 3000 {
				now := time.Now()
				rs := tel.startRequestSpan(context.Background(), "tools/call", trace.SpanContext{}, now)
				rs.name, rs.end = fmt.Sprintf("w%d-%d", w, i), now
				n := int64(1)
				if i%2 == 0 {
					rs.up = upstreamSpan{id: newSpanID(), method: "tools/call", start: now, end: now}
					n = 2
				}
				b.endRequest(&rs)
				ended.Add(n)
			}
		}()
	}
	enders.Wait()
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(stop)
	flushers.Wait()
	exported := map[string]int{}
	for _, req := range exp.reqs {
		for _, rss := range decodeRequest(t, req) {
			for _, ss := range rss.ScopeSpans {
				for _, sp := range ss.Spans {
					exported[hex.EncodeToString(sp.SpanId)]++
				}
			}
		}
	}
	for id, n := range exported {
		if n != 1 {
			t.Fatalf("span %s exported %d times", id, n)
		}
	}
	dropped := 0
	for _, e := range strings.Split(h.all(), "; ") {
		var n int
		if _, err := fmt.Sscanf(e, "%d spans dropped", &n); err == nil {
			dropped += n
		}
	}
	if int64(len(exported)+dropped) != ended.Load() {
		t.Fatalf("%d spans ended, %d exported and %d reported dropped", ended.Load(), len(exported), dropped)
	}
	t.Logf("%d ended, %d exported, %d dropped", ended.Load(), len(exported), dropped)
}
