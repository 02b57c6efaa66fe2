package pin

import (
	"bytes"
	"encoding/json"
	"sync/atomic"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// A session's pin check (Observe) runs when the server's first listing
// arrives, and the session's first listing waits for it. Most of its time
// is decoding the server's record, which does not depend on the listing:
// Prefetch does that ahead, while the server starts, and Observe uses the
// result only when the record file under the lock is byte for byte the
// one that was decoded, the one the event chain names. So the check
// judges exactly what it judges without a prefetch, on the same bytes,
// and every other case (no prefetch, not finished, another server, a
// file that changed, a stray file, a chain that does not name it) takes
// the ordinary path, which decides as always.

// maxPrefetchSize bounds the record Prefetch decodes. Until Observe
// shares the observed definitions with it (sharePrefetched), a prefetched
// record holds its own copy of every definition, live while the listing
// arrives: for the large contracts (a 10,000-tool record is about 10 MB)
// that copy would raise the session's peak memory more than the decode
// it saves is worth.
const maxPrefetchSize = 1 << 20

// A prefetched record: done closes when r and hash are set (r nil when
// the file could not be read or decoded).
type prefetched struct {
	id   string
	done chan struct{}
	hash string  // the file's SHA-256, of the bytes decoded
	r    *record // decoded and checked by readBack
}

// prefetchSlot holds a Store's one prefetched record.
type prefetchSlot struct{ p atomic.Pointer[prefetched] }

// Prefetch starts reading and decoding server id's record file, for the
// next Observe of id to use; it returns at once. It reads under the shared
// lock (waiting for a writer, on its goroutine) and writes nothing: what
// it reads counts only if Observe finds the same bytes under the
// exclusive lock. A later Prefetch replaces an earlier one. It does
// nothing for a backend's store.
func (s *Store) Prefetch(id string) {
	if s.db != nil || !isID(id) {
		return
	}
	p := &prefetched{id: id, done: make(chan struct{})}
	s.pre.p.Store(p)
	go func() {
		defer close(p.done)
		// The file is read under the shared lock, as every other read of
		// a record is, though nothing read here is trusted: on Windows a
		// file held open cannot be renamed over or removed, so a read
		// outside the lock would make a writer's commit (another
		// session's drift, an approve, a forget) fail after its event.
		// Only the read holds it; the decode does not.
		lk, err := s.lock(false)
		if err != nil {
			return
		}
		data, err := atomicfile.ReadFile(s.recordPath(id), maxPrefetchSize)
		lk.Close()
		if err != nil {
			return
		}
		r, err := readBack(id, bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		p.hash, p.r = fileHash(data), r
	}()
}

// takePrefetched returns the record Prefetch decoded for id if it is done
// and its bytes are those of id's record file now, the file the event
// chain names; nil otherwise. The prefetch is used at most once.
func (v *view) takePrefetched(id string, known map[string]json.RawMessage) *record {
	p := v.s.pre.p.Swap(nil)
	if p == nil || p.id != id {
		return nil
	}
	select {
	case <-p.done:
	default:
		return nil // still reading: the ordinary path is as quick
	}
	if p.r == nil || v.db != nil || v.chainErr != nil {
		return nil
	}
	ev, pinned := v.ch.pinned(id)
	if !pinned || ev.Record == nil || *ev.Record != p.hash || v.s.strayFile(id) != "" {
		return nil
	}
	data, err := atomicfile.ReadFile(v.s.recordPath(id), maxPrefetchSize)
	if err != nil || fileHash(data) != p.hash {
		return nil
	}
	sharePrefetched(p.r, known)
	return p.r
}

// sharePrefetched gives r each definition of known whose bytes are r's,
// as readBack does when it is given known: a session that lists what is
// pinned then holds its definitions once.
func sharePrefetched(r *record, known map[string]json.RawMessage) {
	for digest, raw := range r.Definitions {
		if k, ok := known[digest]; ok && bytes.Equal(k, raw) {
			r.Definitions[digest] = k
		}
	}
}
