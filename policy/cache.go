package policy

import (
	"sync"
	"time"
)

// maxCachedDecisions bounds one session's decision cache: far more
// distinct questions than a session asks (one per tool and stage).
const maxCachedDecisions = 4096

// decisionCache keeps providers' decisions for one session, each only
// until its own expiry. It is safe for concurrent use.
type decisionCache struct {
	mu sync.Mutex
	m  map[cacheKey]answer
}

// cacheKey names one question to one provider: the stage and the digest
// of the subject as an http provider would see it (digests of argv and
// URL included, so different servers never share an entry).
type cacheKey struct {
	provider string
	stage    Stage
	subject  string
}

func newDecisionCache() *decisionCache { return &decisionCache{m: map[cacheKey]answer{}} }

func (c *decisionCache) get(k cacheKey, now time.Time) (answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[k]
	if !ok {
		return answer{}, false
	}
	if !now.Before(a.expires) {
		delete(c.m, k)
		return answer{}, false
	}
	return a, true
}

// put keeps a until a.expires. A decision without an expiry is not kept.
// When the cache is full of live decisions, a is not kept either: the
// question is simply asked again.
func (c *decisionCache) put(k cacheKey, a answer, now time.Time) {
	if a.expires.IsZero() || !now.Before(a.expires) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedDecisions {
		for key, v := range c.m {
			if !now.Before(v.expires) {
				delete(c.m, key)
			}
		}
		if len(c.m) >= maxCachedDecisions {
			return
		}
	}
	c.m[k] = a
}
