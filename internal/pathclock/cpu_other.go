//go:build !linux

package pathclock

import "time"

// threadCPU is not known here: the steps' CPU time is left out.
func threadCPU() (int, time.Duration) { return 0, -1 }
