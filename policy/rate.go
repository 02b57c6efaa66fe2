package policy

import (
	"sync"
	"time"
)

// rateWindow is the window of calls_per_minute.
const rateWindow = time.Minute

// maxRateTools bounds the tools one session tracks; a contract has at
// most gate.DefaultLimits.MaxDefinitions, and a session calls far fewer.
const maxRateTools = 100000

// rateLimiter counts one session's calls per tool over a sliding window
// of one minute. It is safe for concurrent use.
type rateLimiter struct {
	mu    sync.Mutex
	calls map[string][]time.Time // per tool, oldest first, at most the limit
}

func newRateLimiter() *rateLimiter { return &rateLimiter{calls: map[string][]time.Time{}} }

// allow records a call of tool at now and reports whether it stays within
// limit calls in the last minute. A refused call is not recorded. limit 0
// means no bound.
func (r *rateLimiter) allow(tool string, limit int64, now time.Time) bool {
	if limit <= 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := r.calls[tool]
	cut := 0
	for cut < len(ts) && !ts[cut].After(now.Add(-rateWindow)) {
		cut++
	}
	ts = ts[cut:]
	if int64(len(ts)) >= limit {
		r.calls[tool] = ts
		return false
	}
	if _, known := r.calls[tool]; !known && len(r.calls) >= maxRateTools {
		return false
	}
	r.calls[tool] = append(ts, now)
	return true
}
