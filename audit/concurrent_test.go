package audit

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

// The multi-process test re-runs this test binary as appenders.
const (
	workerHomeEnv  = "MCPSEAL_AUDIT_TEST_HOME"
	workerIndexEnv = "MCPSEAL_AUDIT_TEST_WORKER"
	workerEvents   = 40
	workerMaxBytes = 8192
)

func TestMain(m *testing.M) {
	if home := os.Getenv(workerHomeEnv); home != "" {
		os.Exit(runWorker(home))
	}
	os.Exit(m.Run())
}

func runWorker(home string) int {
	idx, _ := strconv.Atoi(os.Getenv(workerIndexEnv))
	l, err := Open(home, Options{MaxFileBytes: workerMaxBytes, MaxFiles: 1000})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	for i := range workerEvents {
		e := callEvent(i)
		e.Count = int64(idx)
		if err := l.Append(e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentAppendersAcrossProcesses: six processes append at once,
// with rotation; no event is lost and the chain verifies.
func TestConcurrentAppendersAcrossProcesses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const workers = 6
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), workerHomeEnv+"="+home, workerIndexEnv+"="+strconv.Itoa(i))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("worker %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rep := mustVerify(t, home)
	if !rep.OK() || rep.Events != workers*workerEvents || rep.Files < 2 {
		t.Fatalf("%+v\n%s", rep, faultText(rep))
	}
	evs, _, _ := Tail(home, MaxTail)
	per := map[int64]int{}
	for _, e := range evs {
		per[e.Count]++
	}
	for i := range workers {
		if per[int64(i)] != workerEvents {
			t.Errorf("worker %d: %d events", i, per[int64(i)])
		}
	}
}

// TestConcurrentAppendersInOneProcess: goroutines sharing one Log, and
// Logs opened separately, interleave without losing the chain.
func TestConcurrentAppendersInOneProcess(t *testing.T) {
	t.Parallel()
	shared, home := openTest(t, Options{MaxFileBytes: workerMaxBytes, MaxFiles: 1000})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := shared
			if i%2 == 1 {
				own, err := Open(home, Options{MaxFileBytes: workerMaxBytes, MaxFiles: 1000})
				if err != nil {
					t.Error(err)
					return
				}
				defer own.Close()
				l = own
			}
			for j := range 25 {
				if err := l.Append(callEvent(j)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if rep := mustVerify(t, home); !rep.OK() || rep.Events != 200 {
		t.Fatalf("%+v\n%s", rep, faultText(rep))
	}
}
