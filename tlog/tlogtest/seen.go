package tlogtest

import (
	"testing"

	"github.com/mcpseal/mcpseal/tlog"
)

// RunSeenStore is the contract suite every tlog.SeenStore passes: the
// files under $MCPSEAL_HOME and the fleet's database (pgstate). New makes
// fresh state and returns a function that opens a handle on it; tamper
// replaces the stored checkpoint's bytes by hand.
func RunSeenStore(t *testing.T, New func(t *testing.T) (open func(*testing.T) tlog.SeenStore, tamper func(*testing.T, []byte))) {
	f := Build(t)
	cp := f.Verified.Checkpoint
	t.Run("StoreLoadAcrossHandles", func(t *testing.T) {
		t.Parallel()
		open, _ := New(t)
		a, b := open(t), open(t)
		if got, err := a.Load(f.Key); err != nil || got != nil {
			t.Fatalf("Load of an empty store: %v, %v", got, err)
		}
		if err := a.Store(f.Key, cp); err != nil {
			t.Fatal(err)
		}
		got, err := b.Load(f.Key)
		if err != nil || got == nil || string(got.Note) != string(cp.Note) {
			t.Fatalf("Load on another handle: %v, %v", got, err)
		}
	})
	t.Run("TamperedCheckpointRefused", func(t *testing.T) {
		t.Parallel()
		open, tamper := New(t)
		s := open(t)
		if err := s.Store(f.Key, cp); err != nil {
			t.Fatal(err)
		}
		forged := append([]byte{}, cp.Note...)
		forged[len(forged)/3] ^= 1
		tamper(t, forged)
		if got, err := s.Load(f.Key); err == nil {
			t.Fatalf("a tampered checkpoint loaded: %v", got)
		}
	})
}
