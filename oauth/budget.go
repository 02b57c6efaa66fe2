package oauth

import (
	"context"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Bounds of introspection load: a token the cache has not seen costs one
// request to the issuer, and a client can make up random opaque tokens
// as fast as it can send them. The cache does not help (every token is
// new), so unknown tokens are budgeted per source address, and the
// requests to the issuer in flight at once are capped.
const (
	// peerBurst and peerRefill: each source address may have 30 unknown
	// tokens introspected at once, and one more every 2 s after that. A
	// person's client presents a new token every few minutes; a team
	// behind one NAT address a few per minute.
	peerBurst  = 30
	peerRefill = 2 * time.Second
	// maxPeers bounds the addresses tracked; past it only addresses whose
	// budget is whole again are forgotten, and while none is, an address
	// not yet tracked is refused (fail closed).
	maxPeers = 16384
	// maxInFlight bounds the introspection requests waiting for the
	// issuer at once, whatever their source.
	maxInFlight = 16
)

// peerKey is the request context key of the source address.
type peerKey struct{}

// WithPeer returns ctx carrying the address a request came from, which
// introspection budgets unknown tokens by (an IPv6 address counts by its
// /64, which one host usually holds whole).
func WithPeer(ctx context.Context, addr netip.Addr) context.Context {
	return context.WithValue(ctx, peerKey{}, addr)
}

func peerOf(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(peerKey{}).(netip.Addr)
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// budget is the introspection load limit: per-address token buckets and
// a cap on requests in flight.
type budget struct {
	now      func() time.Time
	inFlight chan struct{}

	mu    sync.Mutex
	peers map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newBudget(now func() time.Time) *budget {
	return &budget{now: now, inFlight: make(chan struct{}, maxInFlight), peers: make(map[netip.Addr]*bucket)}
}

// busy is the failure of a token that is over the budget: 503, so that a
// client retries later rather than asking its user to sign in again.
func busy() *Failure {
	return &Failure{Status: http.StatusServiceUnavailable, Code: "", Reason: ReasonBusy}
}

// take takes a slot in flight and spends one of peer's unknown-token
// budget; done gives the slot back. ok is false when either is exhausted.
// The slot comes first: a request refused for want of a slot reaches no
// issuer and costs its address nothing, so that a flood holding every
// slot cannot also drain the budgets of the addresses that wait.
func (b *budget) take(peer netip.Addr) (done func(), ok bool) {
	select {
	case b.inFlight <- struct{}{}:
	default:
		return nil, false
	}
	if !b.spend(peer) {
		<-b.inFlight
		return nil, false
	}
	return func() { <-b.inFlight }, true
}

func (b *budget) spend(peer netip.Addr) bool {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.peers[peer]
	if k == nil {
		if len(b.peers) >= maxPeers && !b.forgetWhole(now) {
			return false
		}
		k = &bucket{tokens: peerBurst, at: now}
		b.peers[peer] = k
	}
	k.refill(now)
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}

func (k *bucket) refill(now time.Time) {
	if d := now.Sub(k.at); d > 0 {
		k.tokens = min(peerBurst, k.tokens+float64(d)/float64(peerRefill))
		k.at = now
	}
}

// forgetWhole drops the buckets whose budget is whole again (forgetting
// them gives nothing back to their address); it reports whether any went.
func (b *budget) forgetWhole(now time.Time) bool {
	n := len(b.peers)
	for a, k := range b.peers {
		k.refill(now)
		if k.tokens >= peerBurst {
			delete(b.peers, a)
		}
	}
	return len(b.peers) < n
}
