package gate

import (
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// A client lists right after the handshake what the gate has just listed
// to verify it. Asking the server again would cost the whole listing a
// second time (ten 1,000-tool pages take a go-sdk server seconds), and
// leave a window in which the server could answer the client otherwise
// than it answered the gate. So the pages of the gate's own listings are
// kept, and the client's first listing of each kind, page by page and for
// the profile that was verified, is answered with them. The answer still
// goes through checkListing, like any server answer: the shaping, the
// withholding and the sequence tracking apply unchanged.
//
// The pages are kept up to Limits.MaxHeldBytes (a page past that is the
// server's to answer again), for one use each, for pagesTTL, and dropped at once
// when the server says a list changed, when another round starts, or when
// the client asks for a page that is not the next one kept (a client off
// the gate's sequence is answered by the server from then on).

// pagesTTL bounds how long the verified pages are kept for the client.
const pagesTTL = 30 * time.Second

type verifiedPages struct {
	profile string
	until   time.Time
	// kinds maps each kind to its results by the cursor that asked for
	// them ("" for the first page).
	kinds map[contract.Kind]map[string][]byte
}

// keepPages keeps the round's own pages for the client.
func (s *Session) keepPages(r *round) {
	s.pages = nil
	vp := &verifiedPages{profile: r.profile, until: s.cfg.Now().Add(pagesTTL), kinds: make(map[contract.Kind]map[string][]byte)}
	for k, l := range r.listings {
		if len(l.results) > 0 {
			vp.kinds[k] = l.results
		}
	}
	if len(vp.kinds) > 0 {
		s.pages = vp
	}
}

// takePage returns the kept result that answers a client's listing
// request p, removing it; ok is false when the server must answer.
func (s *Session) takePage(p *pendingRequest, params []byte) (result []byte, ok bool) {
	vp := s.pages
	if vp == nil {
		return nil, false
	}
	if !s.cfg.Now().Before(vp.until) {
		s.pages = nil
		return nil, false
	}
	byCursor := vp.kinds[p.kind]
	if byCursor == nil || p.profile != vp.profile {
		return nil, false
	}
	result, ok = byCursor[p.cursor]
	if !ok || !plainListParams(params) {
		delete(vp.kinds, p.kind) // off the sequence: the server answers
		return nil, false
	}
	delete(byCursor, p.cursor)
	if len(byCursor) == 0 {
		delete(vp.kinds, p.kind)
	}
	if len(vp.kinds) == 0 {
		s.pages = nil
	}
	return result, true
}

// plainListParams reports whether list params ask for nothing but a page:
// members cursor and _meta only, and in _meta only the client facts of a
// 2026-07-28 request. Anything else (a progress token, a member a server
// may read) is for the server to answer.
func plainListParams(params []byte) bool {
	if params == nil {
		return true
	}
	po, err := readObject(params)
	if err != nil {
		return false
	}
	for _, m := range po {
		switch m.Key {
		case "cursor":
		case "_meta":
			mo, err := readObject(m.Value)
			if err != nil {
				return false
			}
			for _, mm := range mo {
				switch mm.Key {
				case metaProtocolVersion, metaClientInfo, metaClientCapabilities:
				default:
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// answerFromPage answers the client's listing request p with a kept page,
// as if the server had sent it.
func (s *Session) answerFromPage(p *pendingRequest, result []byte) {
	frame := jsonrpc.NewResult(p.id, result)
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		// The gate's own frame of a result it read: cannot happen. Ask
		// the server instead.
		s.toServer(p.frame)
		return
	}
	s.serverResponse(m, frame)
}
