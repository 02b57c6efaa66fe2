package pin

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The concurrency test re-runs this test binary as worker processes; these
// variables tell a worker what to do.
const (
	workerHomeEnv  = "MCPSEAL_PIN_TEST_HOME"
	workerIndexEnv = "MCPSEAL_PIN_TEST_WORKER"
	workerStartEnv = "MCPSEAL_PIN_TEST_START"
	workers        = 20
	workerRounds   = 5
)

// TestConcurrentPinning20Processes starts 20 processes at the same moment
// against one store. Each pins a server of its own, drifts it, reviews and
// approves the drift; all of them observe one shared server, half from a
// client that declares roots (and sees one more tool). Nothing may be lost:
// every event is in the chain, exactly one process pins the shared server
// and exactly one adds its second profile, no one sees false drift, and the
// chain verifies.
func TestConcurrentPinning20Processes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 processes")
	}
	home := t.TempDir()
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(500 * time.Millisecond)
	outs := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentPinningWorker$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(),
			workerHomeEnv+"="+home,
			workerIndexEnv+"="+strconv.Itoa(i),
			workerStartEnv+"="+strconv.FormatInt(start.UnixNano(), 10),
		)
		wg.Go(func() { outs[i], errs[i] = cmd.CombinedOutput() })
	}
	wg.Wait()
	outcomes := map[string]int{}
	for i := range workers {
		if errs[i] != nil {
			t.Fatalf("worker %d: %v\n%s", i, errs[i], outs[i])
		}
		sc := bufio.NewScanner(bytes.NewReader(outs[i]))
		for sc.Scan() {
			if o, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "shared-outcome: "); ok {
				outcomes[o]++
			}
		}
	}
	if outcomes[FirstPin.String()] != 1 || outcomes[ProfileAdded.String()] != 1 ||
		outcomes[Match.String()] != workers*workerRounds-2 {
		t.Fatalf("shared server outcomes = %v", outcomes)
	}

	rep := mustVerify(t, s)
	// shared: pin, profile; each worker's own server: pin, drift, review, approve.
	if want := int64(2 + workers*4); rep.Events != want {
		t.Fatalf("%d events, want %d", rep.Events, want)
	}
	sums, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != workers+1 {
		t.Fatalf("%d servers, want %d", len(sums), workers+1)
	}
	for _, sum := range sums {
		if sum.Tampered != "" || sum.DriftPending {
			t.Fatalf("server %+v", sum)
		}
	}
	shared, err := s.Get(IdentityForName("shared").ID)
	if err != nil || len(shared.Profiles) != 2 {
		t.Fatalf("shared = %+v, %v", shared, err)
	}
	for i := range workers {
		rec, err := s.Get(IdentityForName(fmt.Sprintf("own-%d", i)).ID)
		if err != nil {
			t.Fatal(err)
		}
		want := contractOf(nil, tool(t, "t", fmt.Sprintf("worker %d, version 2", i))).Digests().Contract
		if got := rec.Profiles[0].Digests.Contract; got != want {
			t.Fatalf("own-%d pinned %s, want the approved %s", i, got, want)
		}
	}
}

// TestConcurrentPinningWorker is one worker process of
// TestConcurrentPinning20Processes; run directly, it skips.
func TestConcurrentPinningWorker(t *testing.T) {
	home := os.Getenv(workerHomeEnv)
	if home == "" {
		t.Skip("a worker of TestConcurrentPinning20Processes")
	}
	i, _ := strconv.Atoi(os.Getenv(workerIndexEnv))
	startNanos, _ := strconv.ParseInt(os.Getenv(workerStartEnv), 10, 64)
	s, err := Open(home)
	if err != nil {
		t.Fatal(err)
	}
	shared := IdentityForName("shared")
	own := IdentityForName(fmt.Sprintf("own-%d", i))
	echo := tool(t, "echo", "Echo the input.")
	profile, sharedContract := profileA, contractOf(nil, echo)
	if i%2 == 1 {
		profile, sharedContract = profileB, contractOf(nil, echo, tool(t, "get-roots-list", "List roots."))
	}
	v1 := contractOf(nil, tool(t, "t", fmt.Sprintf("worker %d, version 1", i)))
	v2 := contractOf(nil, tool(t, "t", fmt.Sprintf("worker %d, version 2", i)))
	time.Sleep(time.Until(time.Unix(0, startNanos)))

	for round := range workerRounds {
		res, err := s.Observe(shared, obsOf(profile), sharedContract, Guard, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("shared-outcome: %s\n", res.Outcome)
		switch round {
		case 0:
			if res, err := s.Observe(own, obsOf(profileA), v1, Guard, time.Now()); err != nil || res.Outcome != FirstPin {
				t.Fatalf("own first pin: %v, %v", res.Outcome, err)
			}
		case 2:
			res, err := s.Observe(own, obsOf(profileA), v2, Guard, time.Now())
			if err != nil || res.Outcome != Drift {
				t.Fatalf("own drift: %v, %v", res.Outcome, err)
			}
			if err := s.MarkReviewed(own.ID, res.Pending); err != nil {
				t.Fatal(err)
			}
			if err := s.Approve(own.ID, res.Pending, time.Now()); err != nil {
				t.Fatal(err)
			}
		default:
			want := v1
			if round > 2 {
				want = v2
			}
			if res, err := s.Observe(own, obsOf(profileA), want, Guard, time.Now()); err != nil || res.Outcome != Match {
				t.Fatalf("own round %d: %v, %v", round, res.Outcome, err)
			}
		}
	}
}
