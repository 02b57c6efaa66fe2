package pathclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the calling thread's id and CPU time.
func threadCPU() (int, time.Duration) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, -1
	}
	return unix.Gettid(), time.Duration(ts.Nano())
}
