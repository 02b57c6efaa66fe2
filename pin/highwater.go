package pin

import (
	"fmt"
	"sync"
)

// highWater is the furthest point of the event chain this Store handle
// has verified or written: its length and the hash of its last line. A
// chain is only ever appended to, so a chain read later that is shorter,
// or whose line at that point hashes differently, was cut back to an
// earlier prefix or rewritten: each of its lines still chains, so only
// memory of the longer chain tells. The memory lasts as long as the
// process (a new process starts from what it reads first).
type highWater struct {
	mu   sync.Mutex
	n    int64
	hash string
}

// check compares chain c with the furthest point seen, and remembers c's
// end when it reaches further. It returns why c cannot be trusted.
func (h *highWater) check(c *chain) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.n, h.hash = c.n, c.last
		return nil
	}
	if c.n < h.n {
		return fmt.Errorf("the event chain has %d events, fewer than the %d this process verified: events were cut off", c.n, h.n)
	}
	if at := c.hashAt(h.n); at != h.hash {
		return fmt.Errorf("event %d of the chain differs from the one this process verified: the chain was rewritten", h.n)
	}
	h.n, h.hash = c.n, c.last
	return nil
}

// hashAt is the hash of line n (1-based) of c, n <= c.n; zeroHash for 0.
func (c *chain) hashAt(n int64) string {
	switch {
	case n == c.n:
		return c.last
	case n <= 0:
		return zeroHash
	}
	return c.all[n].Prev
}

// trustChain checks v's freshly read chain against the store's high
// water; a chain cut back or rewritten becomes v's chain error, so every
// server is held and Verify reports it.
func (v *view) trustChain() {
	if v.chainErr != nil {
		return
	}
	if err := v.s.high.check(v.ch); err != nil {
		exists := v.ch.exists
		v.ch, v.chainErr = emptyChain(), err
		v.ch.exists = exists
	}
}

// remember moves the high water to v's chain after v appended to it.
func (v *view) remember() {
	h := &v.s.high
	h.mu.Lock()
	defer h.mu.Unlock()
	if v.ch.n > h.n {
		h.n, h.hash = v.ch.n, v.ch.last
	}
}
