package telemetry

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestRedTeamRequestSpanDecisionMatchesTheSDK: startRequestSpan stands in
// for the SDK tracer's Start. For every OTEL_TRACES_SAMPLER value mcpseal
// accepts and every parent a client or the session can give it (none,
// the session's span sampled or not, a client's remote context sampled or
// not, with trace state and with flag bits other than sampled), the
// request span's trace id, flags, trace state, recording and sampling
// must be what the SDK's tracer gives a span started with the same
// sampler, parent and kind. This held.
func TestRedTeamRequestSpanDecisionMatchesTheSDK(t *testing.T) {
	t.Parallel()
	ts, err := trace.ParseTraceState("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
	if err != nil {
		t.Fatal(err)
	}
	tid := trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	parents := map[string]context.Context{
		"none": context.Background(),
	}
	for _, f := range []trace.TraceFlags{0x00, 0x01, 0x02, 0x03, 0xff} {
		for _, remote := range []bool{false, true} {
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: f, Remote: remote}).WithTraceState(ts)
			name := "local"
			ctx := trace.ContextWithSpanContext(context.Background(), sc)
			if remote {
				name = "remote"
				ctx = trace.ContextWithRemoteSpanContext(context.Background(), sc)
			}
			parents[name+"-"+f.String()] = ctx
		}
	}
	for _, env := range []map[string]string{
		nil,
		{"OTEL_TRACES_SAMPLER": "always_on"},
		{"OTEL_TRACES_SAMPLER": "always_off"},
		{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"},
		{"OTEL_TRACES_SAMPLER": "parentbased_always_on"},
		{"OTEL_TRACES_SAMPLER": "parentbased_always_off"},
		{"OTEL_TRACES_SAMPLER": " ParentBased_TraceIdRatio ", "OTEL_TRACES_SAMPLER_ARG": " 0.5 "},
	} {
		sampler, err := samplerFromEnv(envOf(env))
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithIDGenerator(randomIDs{}))
		tel := &Telemetry{sampler: sampler}
		for name, ctx := range parents {
			_, sp := tp.Tracer(tracerName).Start(ctx, "tools/call echo", trace.WithSpanKind(trace.SpanKindServer))
			want := sp.SpanContext()
			rs := tel.startRequestSpan(ctx, "tools/call echo", trace.SpanContext{}, time.Now())
			got := rs.sc
			sameTrace := got.TraceID() == want.TraceID()
			if name == "none" {
				// A new trace: the ids differ, and so may a decision by
				// trace id. The SDK's tracer would decide on this one as:
				_, sp2 := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithIDGenerator(fixedIDs{got.TraceID()})).
					Tracer(tracerName).Start(ctx, "tools/call echo", trace.WithSpanKind(trace.SpanKindServer))
				sp.End()
				sp, want, sameTrace = sp2, sp2.SpanContext(), sp2.SpanContext().TraceID() == got.TraceID()
			}
			if !sameTrace || got.TraceFlags() != want.TraceFlags() || got.TraceState().String() != want.TraceState().String() || rs.record != sp.IsRecording() || got.IsRemote() {
				t.Errorf("%v, parent %s: request span %v flags %v state %q recording %v; the SDK's %v flags %v state %q recording %v",
					env, name, got.TraceID(), got.TraceFlags(), got.TraceState().String(), rs.record, want.TraceID(), want.TraceFlags(), want.TraceState().String(), sp.IsRecording())
			}
			if name != "none" && rs.parent.SpanID() != (trace.SpanID{1}) {
				t.Errorf("%v, parent %s: parent %v", env, name, rs.parent.SpanID())
			}
			sp.End()
		}
		_ = tp.Shutdown(context.Background())
	}
}

// fixedIDs gives every root span the trace id tid.
type fixedIDs struct{ tid trace.TraceID }

func (f fixedIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) { return f.tid, newSpanID() }
func (fixedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID  { return newSpanID() }
