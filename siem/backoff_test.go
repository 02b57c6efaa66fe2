package siem

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// TestKicksDoNotShortenAFailingSinksBackoff: every append kicks the
// shippers. While a sink refuses batches, the shipper waits out its
// backoff whatever the kicks say, or a busy process would retry (and, in
// a fleet, renew its lease) at the pace of its calls
// (pgstate's TestAttackReplicaThatCannotShipKeepsLease).
func TestKicksDoNotShortenAFailingSinksBackoff(t *testing.T) {
	home, _ := newLog(t, 10)
	var tries atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ex, err := Start(home, webhookConfig(srv.URL, 1000), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		ex.Kick()
	}
	// Backoff 20, 40, 80, then 100 ms: about a dozen tries in a second;
	// kicks heeded would make hundreds.
	if n := tries.Load(); n > 30 {
		t.Fatalf("a failing sink was tried %d times in a second of kicks", n)
	}
}

// TestDestinationFingerprint: the receiver's address and public key tell
// destinations apart, and no secret is in the fingerprint's input.
func TestDestinationFingerprint(t *testing.T) {
	t.Parallel()
	a := SinkConfig{Name: "hook", Type: "webhook", URL: "https://a.example/audit", HMACKey: []byte("0123456789abcdef0123456789abcdef")}
	b := a
	b.URL = "https://b.example/audit"
	c := a
	c.HMACKey = []byte("another secret, another secret!!")
	if Destination(a) == Destination(b) {
		t.Fatal("two receivers, one fingerprint")
	}
	if Destination(a) != Destination(c) {
		t.Fatal("the HMAC secret is part of the fingerprint")
	}
	if d := Destination(a); len(d) != len("sha256:")+64 || !audit.IsHash(d[len("sha256:"):]) {
		t.Fatalf("fingerprint %q", d)
	}
}
