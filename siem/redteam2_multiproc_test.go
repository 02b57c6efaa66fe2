package siem

import (
	"testing"
	"time"
)

// TestAttackSpoolFullOtherProcessAppends: two gate processes share one
// home and sink (spool 5). A is the leader and its send hangs; A appends
// 50 events. B's Full() counts only B's own appends since its last check,
// so B forwards calls with the spool 10x over until its next poll.
func TestAttackSpoolFullOtherProcessAppends(t *testing.T) {
	home, lg := newLog(t, 1)
	url, hung := hungWebhook(t)
	a, err := Start(home, webhookConfig(url, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	<-hung
	b, err := Start(home, webhookConfig(url, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	time.Sleep(700 * time.Millisecond) // b has polled once
	appendEvents(t, lg, 50)
	a.Appended(50)
	start := time.Now()
	for !b.Full() {
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("process B's Full() stayed false %v with 51 events waiting for a spool of 5 (A.Full %v)", d, a.Full())
	}
}
