// Package sequencetest is the contract suite every lock.SequenceStore
// passes: the host's file and the fleet's database (pgstate).
package sequencetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/mcpseal/mcpseal/lock"
)

// Run runs the suite. New makes fresh state and returns a function that
// opens a new handle on it (another process, another replica).
func Run(t *testing.T, New func(t *testing.T) func(t *testing.T) lock.SequenceStore) {
	const key = "/srv/app/mcpseal.lock"
	d1, d2 := "sha256:1111", "sha256:2222"
	t.Run("RollbackRefused", func(t *testing.T) {
		t.Parallel()
		s := New(t)(t)
		if err := s.Accept(key, 5, d1); err != nil {
			t.Fatal(err)
		}
		if err := s.Accept(key, 5, d1); err != nil {
			t.Fatalf("the same manifest again: %v", err)
		}
		if err := s.Accept(key, 5, d2); !errors.Is(err, lock.ErrRollback) {
			t.Fatalf("sequence 5 for another lock: %v, want ErrRollback", err)
		}
		if err := s.Accept(key, 4, d2); !errors.Is(err, lock.ErrRollback) {
			t.Fatalf("an older sequence: %v, want ErrRollback", err)
		}
		if err := s.Accept(key, 6, d2); err != nil {
			t.Fatal(err)
		}
		if err := s.Accept("/srv/other/mcpseal.lock", 1, d1); err != nil {
			t.Fatalf("another lock's first manifest: %v", err)
		}
	})
	t.Run("RollbackRefusedByEveryHandle", func(t *testing.T) {
		t.Parallel()
		open := New(t)
		a, b := open(t), open(t)
		if err := a.Accept(key, 9, d1); err != nil {
			t.Fatal(err)
		}
		if err := b.Accept(key, 8, d2); !errors.Is(err, lock.ErrRollback) {
			t.Fatalf("an older sequence on another handle: %v, want ErrRollback", err)
		}
	})
	t.Run("ConcurrentAcceptsKeepTheHighest", func(t *testing.T) {
		t.Parallel()
		open := New(t)
		var wg sync.WaitGroup
		for i := range 8 {
			s := open(t)
			wg.Go(func() { _ = s.Accept(key, uint64(10+i), d1) })
		}
		wg.Wait()
		if err := open(t).Accept(key, 16, d1); !errors.Is(err, lock.ErrRollback) {
			t.Fatalf("sequence 16 after 17 was accepted: %v, want ErrRollback", err)
		}
	})
}
