package pgstate_test

import (
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/pin/pintest"
)

// The benchmarks compare the two pin stores on what the gate asks of
// them: a listing check (Observe of a listing that matches its pin: once
// per session start and once per listing) one at a time, and sessions
// starting in parallel. The per-call path asks nothing of the store (a
// verified session checks calls against its contract in memory; see
// gate's BenchmarkCallRoundTrip and e2e's TestFleetCallsDoNotTouchTheDatabase).
//
//	go test ./pgstate/ -run '^$' -bench . -benchtime 2s

func benchStores(b *testing.B, f func(b *testing.B, st *pin.Store)) {
	b.Run("file", func(b *testing.B) {
		st, err := pin.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		f(b, st)
	})
	b.Run("postgres", func(b *testing.B) {
		t := &testing.T{}
		dsn := freshDB(t)
		d := openDB(t, dsn)
		f(b, d.Pins())
		d.Close()
	})
}

var benchObs = pin.Observation{ClientVersion: "2025-06-18", Protocol: "2025-06-18"}

// BenchmarkListingCheck: one listing check of a pinned server at a time.
func BenchmarkListingCheck(b *testing.B) {
	benchStores(b, func(b *testing.B, st *pin.Store) {
		id, c := pintest.ID("bench"), pintest.Contract(&testing.T{}, "v1")
		if _, err := st.Observe(id, benchObs, c, pin.Guard, time.Now()); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := st.Observe(id, benchObs, c, pin.Guard, time.Now()); err != nil || res.Outcome != pin.Match {
				b.Fatalf("%v, %v", res.Outcome, err)
			}
		}
	})
}

// BenchmarkSessionStarts: sessions of one pinned server starting in
// parallel; ns/op is the inverse of sessions per second.
func BenchmarkSessionStarts(b *testing.B) {
	benchStores(b, func(b *testing.B, st *pin.Store) {
		id, c := pintest.ID("bench"), pintest.Contract(&testing.T{}, "v1")
		if _, err := st.Observe(id, benchObs, c, pin.Guard, time.Now()); err != nil {
			b.Fatal(err)
		}
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if res, err := st.Observe(id, benchObs, c, pin.Guard, time.Now()); err != nil || res.Outcome != pin.Match {
					b.Errorf("%v, %v", res.Outcome, err)
					return
				}
			}
		})
	})
}
