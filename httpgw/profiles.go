package httpgw

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// The 2026-07-28 session of a route is one gate for every caller, and the
// gate verifies at most Limits.MaxProfiles client profiles in it (the
// protocol version and capability names each request's _meta declares;
// the client chooses them). On the team gateway callers could declare
// made-up capabilities until the session holds no more, and lock every
// other caller's new profile out. Two rules keep it open:
//
//   - each caller may bring at most maxCallerProfiles profiles into a
//     route's shared session (here); past that its requests with another
//     profile are refused, and the others' are not touched: one caller's
//     profiles cost at most that many verification rounds and pins;
//   - when the session is full, a new profile takes the place of the
//     least recently used one that has no request in flight
//     (gate.Config.EvictIdleProfiles): four callers' 16 profiles cannot
//     deny a fifth caller's; a forgotten profile is verified again, against
//     its pin, when it comes back.
const (
	maxCallerProfiles = 4
	// maxProfileCallers bounds the callers remembered per gateway; past
	// it a caller not yet seen is refused a new profile (fail closed).
	maxProfileCallers = 65536
)

// callerProfile refuses a 2026-07-28 request whose caller already brought
// maxCallerProfiles other profiles into rt's shared session, answering it
// itself; it reports whether it did.
func (gw *Gateway) callerProfile(w http.ResponseWriter, r *http.Request, rt *route, m jsonrpc.Message) bool {
	who := IdentityFrom(r.Context())
	if who == nil || r.Header.Get(sessionHeader) != "" || m.Kind != jsonrpc.Request {
		return false
	}
	meta := member(m.Params, "_meta")
	version, ok := stringMember(meta, "io.modelcontextprotocol/protocolVersion")
	if !ok {
		return false // the gate refuses it, or it opens no profile
	}
	var names []string
	if caps := member(meta, "io.modelcontextprotocol/clientCapabilities"); caps != nil {
		ms, err := jsonrpc.Members(caps)
		if err != nil {
			return false // the gate refuses what it cannot read
		}
		for _, mm := range ms {
			names = append(names, mm.Key)
		}
		slices.Sort(names)
	}
	key := version + "\x00" + strings.Join(names, "\x00")
	caller := rt.name + "\x00" + who.Key()
	gw.mu.Lock()
	seen := gw.profiles[caller]
	_, known := seen[key]
	allowed := known || len(seen) < maxCallerProfiles && (seen != nil || len(gw.profiles) < maxProfileCallers)
	if allowed && !known {
		if seen == nil {
			seen = make(map[string]struct{}, 1)
			gw.profiles[caller] = seen
		}
		seen[key] = struct{}{}
	}
	gw.mu.Unlock()
	if allowed {
		return false
	}
	gw.event(Event{Kind: EventRefused, Route: rt.name, Reason: "identity", Status: http.StatusOK, Method: r.Method})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(jsonrpc.NewError(m.ID, gate.CodeRefused, "mcpseal: too many client profiles from your identity on this route; not forwarded", identityData(gate.ReasonQueueFull, rt.id)))
	return true
}
