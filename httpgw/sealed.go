package httpgw

import (
	"crypto/subtle"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/sessionid"
)

// Sealed session ids (Config.SessionKeys, docs/fleet.md).
//
// With the replicas' shared keys, a url route's legacy session gets an
// Mcp-Session-Id that seals what its handshake settled: the local id every
// replica knows the session by, the upstream's own session id, the
// negotiated version, the client's declared profile, the listing kinds the
// server offered, the verified instructions, the caller (under --auth) and
// when it was issued. A replica that does not hold the session opens the id
// and continues it: the upstream session is taken over as it is, and the
// gate lists the contract itself and checks it against the shared pin
// (gate.Session.Resume) before anything reaches the client or the server.
// An id that does not open — tampered, expired, under a key not listed,
// sealed for another route, presented by another caller — and any id on a
// command route (its child runs on one replica) gets the spec's 404, and the
// client initializes again.

// resolve maps a presented session id to the local id the session is known
// by, with the claims when the id is sealed; ok is false for a sealed id
// that does not open.
func (gw *Gateway) resolve(sid string, rt *route) (local string, c *sessionid.Claims, ok bool) {
	k := gw.cfg.SessionKeys
	if k == nil || !sessionid.IsSealed(sid) {
		return sid, nil, true
	}
	cl, err := k.OpenAnyTime(sid, rt.name)
	if err != nil {
		return "", nil, false
	}
	return cl.Local, &cl, true
}

// find returns the legacy session sid names on rt: this replica's, or one
// another replica sealed, continued here. nil means 404.
func (gw *Gateway) find(sid string, rt *route, who *oauth.Identity) *session {
	local, c, ok := gw.resolve(sid, rt)
	if !ok {
		return nil
	}
	for {
		gw.mu.Lock()
		s, present := gw.sessions[local]
		wait := gw.resuming[local]
		switch {
		case s != nil:
			gw.mu.Unlock()
			if s.rt != rt {
				return nil
			}
			if c != nil && s.over() {
				gw.letGo(s)
				return nil
			}
			return s
		case c == nil || rt.endpoint == nil:
			gw.mu.Unlock()
			return nil
		case wait != nil:
			// Another request of the session is continuing it here.
			gw.mu.Unlock()
			<-wait
			continue
		case present:
			gw.mu.Unlock()
			return nil // a slot of this replica's own starting session
		}
		gw.mu.Unlock()
		return gw.continueSession(rt, sid, local, c, who)
	}
}

// continueSession opens, on this replica, the session another replica
// sealed into sid.
func (gw *Gateway) continueSession(rt *route, sid, local string, c *sessionid.Claims, who *oauth.Identity) *session {
	if _, err := gw.cfg.SessionKeys.Open(sid, rt.name, time.Now()); err != nil {
		return nil // expired
	}
	if subtle.ConstantTimeCompare([]byte(c.Owner), []byte(sessionid.Owner(who.Key()))) != 1 {
		return nil // another caller's session
	}
	if c.Server != sessionid.Server(rt.spec.URL) {
		return nil // sealed for a route of this name that points elsewhere
	}
	if ended, err := gw.cfg.EndedSessions.Ended(endedKey(local)); err != nil || ended {
		if err != nil {
			gw.log.Warn("cannot read the ended sessions: not continuing a sealed session", "route", rt.name, "err", err)
		}
		return nil // its client ended it (or we cannot tell)
	}
	gw.mu.Lock()
	if gw.closed || len(gw.sessions) >= gw.lim.MaxSessions || gw.callerSessions(who.Key()) >= maxCallerSessions(gw.lim.MaxSessions, who) || gw.resuming[local] != nil {
		gw.mu.Unlock()
		return nil
	}
	if _, taken := gw.sessions[local]; taken {
		gw.mu.Unlock()
		return nil
	}
	done := make(chan struct{})
	gw.resuming[local] = done
	gw.sessions[local] = nil
	gw.reserved[local] = who.Key()
	gw.mu.Unlock()
	s, err := newSession(rt, local, false, who, c)
	gw.mu.Lock()
	delete(gw.reserved, local)
	delete(gw.resuming, local)
	close(done)
	if err != nil || gw.closed {
		delete(gw.sessions, local)
	} else {
		gw.sessions[local] = s
	}
	gw.mu.Unlock()
	if err != nil {
		gw.log.Warn("cannot continue a sealed session", "route", rt.name, "err", err)
		return nil
	}
	if gw.isClosed() {
		s.shutdown()
		return nil
	}
	s.sealed.Store(&sid)
	// The request waits for the verdict anyway (the gate queues it); here
	// it waits so that a session that cannot go on is answered 404.
	waitChan(s.settled, gw.lim.VerifyTimeout+time.Second)
	if s.over() {
		gw.log.Info("a continued session cannot go on here: 404, the client initializes again", "route", rt.name)
		gw.letGo(s)
		return nil
	}
	gw.log.Debug("continuing a session another replica opened", "route", rt.name)
	return s
}

// letGo drops this replica's copy of a sealed session without ending the
// session upstream (its slot is freed; see Upstream.Keep).
func (gw *Gateway) letGo(s *session) {
	gw.mu.Lock()
	if gw.sessions[s.id] == s {
		delete(gw.sessions, s.id)
	}
	gw.mu.Unlock()
	s.shutdown()
}

// end is the client's DELETE of a legacy session: the session ends here
// and upstream, and a sealed id is recorded as ended (EndedSessions) so
// that no replica continues it again.
func (gw *Gateway) end(s *session) error {
	if s.sealed.Load() != nil {
		exp := time.Unix(s.expires.Load(), 0)
		if err := gw.cfg.EndedSessions.End(endedKey(s.id), exp); err != nil {
			return err
		}
	}
	if up, ok := s.srv.(*egress.Upstream); ok {
		up.Keep(false)
	}
	gw.forget(s)
	return nil
}

// continuation is the gate's resume state of claims c.
func continuation(c *sessionid.Claims) gate.Continuation {
	g := gate.Continuation{ClientVersion: c.ClientVersion, Capabilities: c.Capabilities, Protocol: c.Protocol, DiscoverRefused: c.DiscoverRefused, Instructions: c.Instructions}
	for _, o := range c.Offers {
		g.Offers = append(g.Offers, contract.Kind(o))
	}
	return g
}

// seal issues the sealed id of a url route's legacy session once its
// initialize answer leaves verified (under s.mu). A session the gate did
// not verify, or whose facts do not fit an id (long instructions), keeps
// the id only this replica knows.
func (s *session) seal() {
	k := s.rt.gw.cfg.SessionKeys
	up, isURL := s.srv.(*egress.Upstream)
	if k == nil || !isURL || s.failed {
		return
	}
	cont, ok := s.g.Continuation()
	if !ok {
		return
	}
	upstream, _ := up.Session()
	now := time.Now()
	c := sessionid.Claims{
		Local: s.id, Route: s.rt.name, Upstream: upstream, Server: sessionid.Server(s.rt.spec.URL), Protocol: cont.Protocol,
		ClientVersion: cont.ClientVersion, Capabilities: cont.Capabilities, DiscoverRefused: cont.DiscoverRefused,
		Instructions: cont.Instructions, Owner: sessionid.Owner(s.owner),
		Issued: now.Unix(), Expires: now.Add(sessionid.MaxAge).Unix(),
	}
	for _, o := range cont.Offers {
		c.Offers = append(c.Offers, string(o))
	}
	id, err := k.Seal(c, nil)
	if err != nil {
		s.log.Info("session id not sealed: this session continues on this replica only", "reason", "bounds")
		return
	}
	s.expires.Store(c.Expires)
	s.sealed.Store(&id)
	up.Keep(true) // the session may go on elsewhere: only its client's DELETE ends it
}

// publicID is the Mcp-Session-Id the client is given.
func (s *session) publicID() string {
	if p := s.sealed.Load(); p != nil {
		return *p
	}
	return s.id
}
