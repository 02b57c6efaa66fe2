package httpgw

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// EndedSessions remembers the sealed session ids whose client ended them
// (DELETE) until they expire, for every replica: a sealed id opens on any
// replica for sessionid.MaxAge, and after DELETE it must get 404
// everywhere. A replica asks before it continues a session it does not
// hold (never per request of one it holds). pgstate.EndedSessions keeps
// them in the fleet's database; without one, the gateway keeps them in the
// process's memory (a gateway without a shared database is one replica).
// Keys are digests of the session's local id, never an id itself.
type EndedSessions interface {
	End(key string, expires time.Time) error
	Ended(key string) (bool, error)
}

// endedKey is the EndedSessions key of the session known by local.
func endedKey(local string) string {
	sum := sha256.Sum256([]byte("mcpseal ended session v1\x00" + local))
	return hex.EncodeToString(sum[:])
}

// processEnded is the EndedSessions of the gateways of this process that
// have no shared one.
var processEnded = &memoryEnded{m: map[string]time.Time{}}

// memoryEnded keeps ended ids in memory, each until its expiry; expired
// ones are dropped whenever an id is ended, so it holds at most the ids
// ended within sessionid.MaxAge.
type memoryEnded struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (e *memoryEnded) End(key string, expires time.Time) error {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, exp := range e.m {
		if exp.Before(now) {
			delete(e.m, k)
		}
	}
	if expires.After(e.m[key]) {
		e.m[key] = expires
	}
	return nil
}

func (e *memoryEnded) Ended(key string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.m[key]
	return ok, nil
}
