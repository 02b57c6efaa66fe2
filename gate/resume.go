package gate

import (
	"slices"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

// A Continuation is what a verified legacy session's handshake settled:
// enough for another gateway replica to continue the session (Resume)
// without a handshake of its own, and to verify it as this one did.
type Continuation struct {
	// ClientVersion is the version the client's initialize asked for.
	ClientVersion string
	// Capabilities are the names of the capabilities the client declared.
	Capabilities []string
	// Protocol is the version the server answered.
	Protocol string
	// DiscoverRefused is part of the pinned profile (pin.Observation).
	DiscoverRefused bool
	// Offers are the listing kinds the server's capabilities offered.
	Offers []contract.Kind
	// Instructions are the verified instructions the client received.
	Instructions *string
}

// Continuation returns the facts of a legacy session that verified and is
// open, and false for any other session.
func (s *Session) Continuation() (Continuation, bool) {
	if !s.legacy || s.phase != phaseOpen || s.verified[s.legacyProfile] == nil {
		return Continuation{}, false
	}
	o := s.obs[s.legacyProfile]
	c := Continuation{
		ClientVersion:   o.ClientVersion,
		Capabilities:    slices.Clone(o.Capabilities),
		Protocol:        s.legacyVersion,
		DiscoverRefused: o.DiscoverRefused,
		Offers:          slices.Clone(s.legacyOffers),
	}
	if in := s.verified[s.legacyProfile].Instructions; in != nil {
		t := *in
		c.Instructions = &t
	}
	return c, true
}

// Resume starts a session that another replica opened and verified, from
// its Continuation, on a server connection that continues the same
// upstream session (no initialize is sent again). Nothing is released
// before the gate has listed the contract itself and checked it against
// the pin store, exactly as after a handshake: until then every client
// message waits, and a contract that does not match the pin blocks the
// session. Call it before the first message.
//
// The instructions, protocol and fallback of c were not observed from the
// server here (no handshake is sent), only carried: they are checked
// against the pin without writing anything (pin.Observation.Carried), and
// when they differ the session closes with ReasonStale rather than filing
// a pending change. Only the listings this session makes are judged as
// drift.
func (s *Session) Resume(c Continuation) []Out {
	s.out = nil
	if s.phase != phaseIdle {
		s.closeUnverified(ReasonUnreadable, "mcpseal: a session cannot be resumed once it has started")
		return s.flush()
	}
	o := pin.Observation{ClientVersion: c.ClientVersion, Capabilities: slices.Clone(c.Capabilities), Protocol: c.Protocol, DiscoverRefused: c.DiscoverRefused, Carried: true}
	s.legacy = true
	s.legacyVersion = c.Protocol
	s.legacyProfile = o.Profile()
	s.legacyOffers = slices.Clone(c.Offers)
	s.discoverRefused = c.DiscoverRefused
	r := &round{profile: s.legacyProfile, instructions: c.Instructions}
	s.caps[r.profile] = o.Capabilities
	s.obs[r.profile] = o
	s.phase = phaseListing
	s.round = r
	r.deadline = s.cfg.Now().Add(s.cfg.Limits.VerifyTimeout)
	s.startListingsOf(r, c.Offers, false)
	return s.flush()
}

// offered is the listing kinds caps offers.
func offered(caps []byte) []contract.Kind {
	var ks []contract.Kind
	for _, k := range contract.Kinds {
		if offers(caps, k) {
			ks = append(ks, k)
		}
	}
	return ks
}
