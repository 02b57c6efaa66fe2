package httpgw

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/pin"
)

// The team gateway: with Config.Auth the gateway is an OAuth 2.1 resource
// server (package oauth). Every request but a metadata request needs a
// valid access token for the route it names; the launch token is off. The
// verified identity is an input of the rest of the request:
//
//   - a legacy session is bound to the identity that opened it: another
//     identity naming its Mcp-Session-Id gets 404, as for an unknown id
//     (the specification's session-hijack guidance);
//   - listings are filtered per identity (Config.Identities): the answer
//     to a tools/list leaves out the tools the caller may not see, while
//     the gate behind has verified the server's whole contract;
//   - a tools/call of a tool the caller may not see is answered by the
//     gate as a call of an unknown tool; per-caller rate limits and
//     confirmations (session.admit) apply only once the gate found the
//     tool in the verified contract and visible to the caller, so that a
//     made-up name and a hidden tool take the same path;
//   - the inbound token is never forwarded: upstream requests are built
//     from nothing (package egress), exactly as with the launch token.

// Reasons of the team gateway's refusals.
const (
	ReasonAuth  = "unauthorized" // no or an invalid access token (401)
	ReasonScope = "insufficient-scope"
	ReasonProxy = "proxy" // --insecure-behind-proxy and a peer not in the trusted list
	// ReasonExpired ends a stream (or a request still waiting) whose
	// caller's access token expired meanwhile.
	ReasonExpired = "token-expired"
)

// IdentityPolicy decides, per caller, what the team gateway lists and
// forwards. It must be safe for concurrent use and must not block.
type IdentityPolicy interface {
	// Visible reports whether who may see (and call) tool on route.
	Visible(route string, who *oauth.Identity, tool string) bool
	// Call takes one call of tool by who; "" allows it, NeedsConfirmation
	// says a person must confirm it, anything else is the stable reason it
	// is refused (a rate limit).
	Call(route string, who *oauth.Identity, tool string) string
}

// NeedsConfirmation is IdentityPolicy.Call's answer for a call a person
// must confirm. A legacy session's own gate asks (its policy knows its one
// caller); the shared 2026-07-28 session cannot ask for one caller among
// many, so there the call is refused with ReasonNoConfirmation.
const NeedsConfirmation = "confirm"

// ReasonNoConfirmation: the caller's calls of the tool need a person's
// confirmation, which a 2026-07-28 (stateless) request cannot get here
// (the policy's reason for a client that cannot ask).
const ReasonNoConfirmation = "confirm-unavailable"

// The JSON-RPC codes of the host policy's refusals (docs/error-codes.md),
// which the front door's identity decisions answer with.
const (
	codePolicy  = -32009 // the host policy refused the call (a caller's rate limit)
	codeConfirm = -32012 // a person's confirmation was needed and could not be asked
)

// identityKey is the request context key of the verified identity.
type identityKey struct{}

// IdentityFrom returns the request's verified identity, or nil.
func IdentityFrom(ctx context.Context) *oauth.Identity {
	id, _ := ctx.Value(identityKey{}).(*oauth.Identity)
	return id
}

// authenticate runs the resource server's checks on a request that
// passed the front door. It answers metadata requests and refusals itself
// and returns false then; otherwise it returns the request carrying its
// identity.
func (gw *Gateway) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	v := gw.cfg.Auth
	if len(gw.cfg.TrustedProxies) > 0 && !gw.fromTrustedProxy(r) {
		gw.writeRefusal(w, r, "", refuse(http.StatusForbidden, ReasonProxy, "requests must come through the trusted proxy"))
		return r, false
	}
	if name, ok := oauth.MetadataRoute(r.URL.Path); ok {
		if gw.routes[name] == nil || r.URL.RawQuery != "" {
			gw.writeRefusal(w, r, "", refuse(http.StatusNotFound, ReasonRoute, "no such route"))
			return r, false
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			gw.writeRefusal(w, r, name, refuse(http.StatusMethodNotAllowed, ReasonMethod, "metadata is read with GET"))
			return r, false
		}
		v.Config().WriteMetadata(w, name)
		return r, false
	}
	rt := gw.routeOf(r)
	if rt == nil {
		return r, true // the route lookup refuses it, with no hint of what exists
	}
	ctx := r.Context()
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		ctx = oauth.WithPeer(ctx, ap.Addr()) // introspection budgets unknown tokens by it
	}
	id, f := v.Authenticate(ctx, r.Header, rt.name)
	if f != nil && f.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
		gw.writeRefusal(w, r, rt.name, refuse(f.Status, ReasonBusy, "too many unknown access tokens to check; try again later"))
		gw.log.Info("access token not checked", "route", rt.name, "reason", f.Reason)
		return r, false
	}
	if f != nil {
		w.Header().Set("WWW-Authenticate", v.Config().Challenge(rt.name, f))
		reason, msg := ReasonAuth, "a valid access token for this route is required (see its protected resource metadata)"
		if f.Status == http.StatusForbidden {
			reason, msg = ReasonScope, "the access token lacks a scope this route requires"
		}
		gw.writeRefusal(w, r, rt.name, refuse(f.Status, reason, msg))
		gw.log.Info("access token refused", "route", rt.name, "reason", f.Reason)
		return r, false
	}
	if sid := r.Header.Get(sessionHeader); sid != "" && !gw.ownedBy(sid, rt, id) {
		gw.writeRefusal(w, r, rt.name, refuse(http.StatusNotFound, ReasonSession, "no such session; initialize a new one"))
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, id)), true
}

func (gw *Gateway) routeOf(r *http.Request) *route {
	name := r.URL.Path
	if len(name) > 0 && name[0] == '/' {
		name = name[1:]
	}
	if n := len(name); n > 0 && name[n-1] == '/' {
		name = name[:n-1]
	}
	return gw.routes[name]
}

func (gw *Gateway) fromTrustedProxy(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range gw.cfg.TrustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// ownedBy reports whether the legacy session sid, if it exists, was
// opened by id. An unknown id passes: the handlers answer it as before.
func (gw *Gateway) ownedBy(sid string, rt *route, id *oauth.Identity) bool {
	sid, _, ok := gw.resolve(sid, rt)
	if !ok {
		return true // find answers 404
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	s := gw.sessions[sid]
	if s == nil || s.rt != rt {
		return true
	}
	return s.owner == id.Key()
}

// hiddenCall reports whether m is a tools/call of a tool the request's
// caller may not see.
func (gw *Gateway) hiddenCall(r *http.Request, rt *route, m jsonrpc.Message) bool {
	who := IdentityFrom(r.Context())
	pol := gw.cfg.Identities
	if who == nil || pol == nil || m.Method != "tools/call" {
		return false
	}
	tool, ok := stringMember(m.Params, "name")
	return ok && !pol.Visible(rt.name, who, tool)
}

// admit is gate.Config.Admit: it takes one call of tool, which the
// verified contract has and its caller may see, by the caller of request
// (under s.mu, as every gate step runs). A made-up name and a hidden tool
// never get here: the gate answers both as unknown, before any rate is
// charged or any confirmation is needed, so the two look alike.
func (s *session) admit(request, tool string) *gate.Refusal {
	pol := s.rt.gw.cfg.Identities
	if pol == nil {
		return nil
	}
	who := s.who
	if s.modern {
		who = nil
		if ex := s.waiting[request]; ex != nil {
			who = ex.who
		}
	}
	if who == nil {
		return nil // hidden refuses a request whose caller is gone
	}
	code := codePolicy
	reason := pol.Call(s.rt.name, who, tool)
	if reason == NeedsConfirmation {
		if !s.modern {
			return nil // the session's gate asks its one caller (Hooks.Call)
		}
		reason, code = ReasonNoConfirmation, codeConfirm
	}
	if reason == "" {
		return nil
	}
	s.rt.gw.event(Event{Kind: EventRefused, Route: s.rt.name, Reason: "identity", Status: http.StatusOK, Method: http.MethodPost})
	return &gate.Refusal{Code: code, Message: "mcpseal: this call was refused for your identity (" + reason + "); not forwarded", Reason: reason}
}

func identityData(reason string, id pin.Identity) []byte {
	b := []byte(`{"reason":`)
	b = jsonrpc.AppendString(b, reason)
	b = append(b, `,"server":{"id":`...)
	b = jsonrpc.AppendString(b, id.ID)
	b = append(b, `,"label":`...)
	b = jsonrpc.AppendString(b, id.Label)
	return append(b, "}}"...)
}

// listingFilter returns the filter of a tools/list answer for the
// request's caller, or nil when nothing is filtered.
func (gw *Gateway) listingFilter(r *http.Request, rt *route, m jsonrpc.Message) func([]byte) []byte {
	who := IdentityFrom(r.Context())
	pol := gw.cfg.Identities
	if who == nil || pol == nil || m.Method != "tools/list" {
		return nil
	}
	return func(frame []byte) []byte {
		out, ok := filterTools(frame, func(name string) bool { return pol.Visible(rt.name, who, name) })
		if !ok {
			// An answer the filter cannot read is not delivered as it is:
			// it could list a tool this caller may not see.
			return jsonrpc.NewError(m.ID, gate.CodeRefused, "mcpseal: the listing could not be filtered for your identity", identityData(gate.ReasonUnreadable, rt.id))
		}
		return out
	}
}

// filterTools removes from a tools/list answer the tools keep refuses,
// keeping every other byte. An error answer passes as it is.
func filterTools(frame []byte, keep func(string) bool) ([]byte, bool) {
	if err := jsonrpc.CheckUnique(frame); err != nil {
		return nil, false
	}
	res := member(frame, "result")
	if res == nil {
		return frame, hasMember(frame, "error")
	}
	tools := member(res, "tools")
	if tools == nil {
		return nil, false
	}
	els, err := jsonrpc.Elements(tools)
	if err != nil {
		return nil, false
	}
	kept := make([]byte, 0, len(tools))
	kept = append(kept, '[')
	dropped := false
	for _, el := range els {
		name, ok := stringMember(el, "name")
		if !ok {
			return nil, false
		}
		if !keep(name) {
			dropped = true
			continue
		}
		if len(kept) > 1 {
			kept = append(kept, ',')
		}
		kept = append(kept, el...)
	}
	if !dropped {
		return frame, true
	}
	kept = append(kept, ']')
	return splice(frame, tools, kept), true
}

// ListenNetwork opens the team gateway's listener on any IP literal
// address ("0.0.0.0:8443", "[2001:db8::1]:8443"). The caller must require
// TLS (or a trusted proxy) and Auth: the launch token is for one machine.
func ListenNetwork(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad listen address: %w", err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return nil, errors.New("the listen address must be an IP literal")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("bad port %q", port)
	}
	return net.Listen("tcp", net.JoinHostPort(ip.String(), port))
}

// callerOf is gate.Config.CallerOf: the caller of the request the gate
// knows by the id key request (under s.mu, as every gate step runs). In
// the shared 2026-07-28 session ids are the gateway's own, one per
// request, so the request names its exchange and the exchange its
// caller; a legacy session has one caller.
func (s *session) callerOf(request string) *gate.Caller {
	if ex := s.waiting[request]; ex != nil && ex.audited != nil {
		return ex.audited
	}
	return s.orphans[request]
}

// hidden is gate.Config.Hidden: whether the caller of request may not see
// tool. A request whose caller is not known any more (its client went
// away) sees nothing (fail closed).
func (s *session) hidden(request, tool string) bool {
	pol := s.rt.gw.cfg.Identities
	if pol == nil {
		return false
	}
	who := s.who
	if s.modern {
		who = nil
		if ex := s.waiting[request]; ex != nil {
			who = ex.who
		}
	}
	return who == nil || !pol.Visible(s.rt.name, who, tool)
}
