package siem

import (
	"sync"
	"testing"
	"time"
)

// TestAttackSpoolFullRaceCheckSpoolVsAppended: spool 5, the sink hangs
// (cursor 0). Writers append and announce (Appended) while checkSpool
// runs concurrently (harder than the run loop does: from another
// goroutine too). Whenever the log holds more than 5 events, every
// Full() after the writer's Appended must be true.
func TestAttackSpoolFullRaceCheckSpoolVsAppended(t *testing.T) {
	home, lg := newLog(t, 1)
	url, _ := hungWebhook(t)
	ex, err := Start(home, webhookConfig(url, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				ex.sinks[0].checkSpool()
			}
		}
	}()
	total := 1
	misses := 0
	for i := 0; i < 40; i++ {
		appendEvents(t, lg, 1)
		ex.Appended(1)
		total++
		if total > 5 && !ex.Full() {
			misses++
		}
	}
	close(stop)
	wg.Wait()
	if misses > 0 {
		t.Errorf("Full() false %d times with the backlog over the spool", misses)
	}
	// The sink catches up: Full must go false once the cursor is at the head.
	head, _ := ex.src.Head()
	c, _ := ex.sinks[0].cursor()
	t.Logf("head %d cursor %d", head, c.seq)
	_ = time.Second
}
