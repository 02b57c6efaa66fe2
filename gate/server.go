package gate

import (
	"errors"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// FromServer takes one frame from the server.
func (s *Session) FromServer(frame []byte) []Out {
	s.out = nil
	s.fromServer(frame)
	return s.flush()
}

func (s *Session) fromServer(frame []byte) {
	if s.phase == phaseClosed {
		return
	}
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		// Servers that print banners or logs on stdout: the client never
		// sees them; the user does, on stderr, without the content.
		s.log.Warn("server wrote a line that is not a JSON-RPC message to stdout: not forwarded", "server", s.cfg.Identity.ID, "bytes", len(frame), "err", err)
		return
	}
	if o := s.cfg.Hooks.Observer; o != nil && m.Kind != jsonrpc.Batch {
		o.Took(ToServer, m)
	}
	switch m.Kind {
	case jsonrpc.Batch:
		elems, err := jsonrpc.Elements(frame)
		if err != nil || len(elems) > maxBatch || !s.batchesAllowed() {
			s.log.Warn("JSON-RPC batch from the server: not forwarded", "server", s.cfg.Identity.ID)
			return
		}
		// Each answer or request is gated on its own, as if sent alone.
		for _, e := range elems {
			s.fromServer(append([]byte(nil), e...))
		}
		return
	case jsonrpc.Response:
		s.serverResponse(m, frame)
		return
	}
	// A server request (sampling, roots, elicitation, ping) or notification.
	if s.phase == phaseOpen {
		s.serverMessage(frame)
		return
	}
	s.hold(frame)
}

// notificationsTasks is the tasks notification of the 2026-07-28 tasks
// extension; 2025-11-25 sends notifications/tasks/status.
const notificationsTasks = "notifications/tasks"

// serverMessage delivers a server request or notification to the client;
// task notifications are dropped (the gate runs no tasks).
// A request whose id is in the gate's own id space (any string id starting
// "mcpseal-": the gate's requests to either side), or repeats the id of one
// still unanswered, is refused: the client's answer to it could otherwise
// be taken for the answer to the gate's own request — a person's
// confirmation — or reach the wrong request.
func (s *Session) serverMessage(frame []byte) {
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		return // held frames were peeked when they came
	}
	if m.Kind != jsonrpc.Request {
		if !strings.HasPrefix(m.Method, "notifications/") {
			// A request's method without an id ("elicitation/create"):
			// no notification of MCP, and a client may still act on it.
			s.log.Warn("server notification that is not one of MCP's dropped", "server", s.cfg.Identity.ID, "method", contract.SafeName(m.Method))
			return
		}
		if m.Method == notificationsTasks || strings.HasPrefix(m.Method, notificationsTasks+"/") {
			// A task's state, and in the 2026-07-28 extension its result,
			// past the Result hook: the gate runs no tasks.
			s.log.Debug("task notification dropped", "server", s.cfg.Identity.ID)
			return
		}
		if strings.HasSuffix(m.Method, "/list_changed") {
			s.pages = nil // the kept pages may no longer be the server's
		}
		if m.Method == methodCancelled {
			// The server gave up a request: the client will not answer it.
			if id, ok, err := lookup(m.Params, "requestId"); err == nil && ok {
				delete(s.serverReqs, jsonrpc.IDKey(id))
			}
		}
		s.toClient(frame)
		return
	}
	key := jsonrpc.IDKey(m.ID)
	_, dup := s.serverReqs[key]
	switch {
	case dup || s.asks[key] != "" || s.inGateIDSpace(m.ID):
		s.log.Warn("server request with an id in the gate's own id space or already in flight: refused", "server", s.cfg.Identity.ID, "method", contract.SafeName(m.Method))
		s.toServer(jsonrpc.NewError(m.ID, CodeRefused, "mcpseal: request id collides with the gate's own requests or one in flight; not forwarded", marshalData(s.errorData(ReasonIDCollision))))
	case len(s.serverReqs) >= s.cfg.Limits.MaxPending:
		s.toServer(jsonrpc.NewError(m.ID, CodeRefused, "mcpseal: too many server requests in flight; not forwarded", marshalData(s.errorData(ReasonQueueFull))))
	default:
		if reason := s.serverRequestRefusal(m); reason != "" {
			s.refuseServerRequest(m, reason)
			return
		}
		s.serverReqs[key] = struct{}{}
		s.toClient(frame)
	}
}

// gateIDSpace starts every id the gate gives its own requests (IDPrefix
// from NewIDPrefix, askPrefix).
const gateIDSpace = "mcpseal-"

func (s *Session) inGateIDSpace(id []byte) bool {
	if len(id) == 0 || id[0] != '"' {
		return false
	}
	v, err := jsonrpc.DecodeString(id)
	return err != nil || strings.HasPrefix(v, gateIDSpace) || s.cfg.IDPrefix != "" && strings.HasPrefix(v, s.cfg.IDPrefix)
}

func (s *Session) hold(frame []byte) {
	if len(s.held) >= s.cfg.Limits.MaxHeld || s.heldBytes+len(frame) > s.cfg.Limits.MaxHeldBytes {
		s.log.Warn("server message dropped: too many messages held for verification", "server", s.cfg.Identity.ID)
		return
	}
	s.held = append(s.held, frame)
	s.heldBytes += len(frame)
}

func (s *Session) serverResponse(m jsonrpc.Message, frame []byte) {
	key := jsonrpc.IDKey(m.ID)
	if o, ok := s.own[key]; ok {
		delete(s.own, key)
		s.ownResponse(o, m)
		return
	}
	if s.abandoned.take(key) {
		// The late answer to a request the gate cancelled (a call
		// timeout): the client has had its answer.
		s.log.Debug("answer to a cancelled request dropped", "server", s.cfg.Identity.ID)
		return
	}
	p, ok := s.pending[key]
	if !ok {
		// Forwarding it could let the client match it to a request the
		// gate has not checked.
		s.log.Warn("response with an id no request is waiting for: not forwarded", "server", s.cfg.Identity.ID)
		return
	}
	if p.held {
		// The server never got this request: the gate holds it for a
		// decision or a person ("deleted, trust me" while the person is
		// still being asked).
		s.log.Warn("response to a request the server never got: not forwarded", "server", s.cfg.Identity.ID)
		return
	}
	s.forget(key)
	if m.Result == nil {
		if reason := errorLookAlike(m.Error); reason != "" {
			s.withholdError(p, m, reason)
			return
		}
	}
	switch {
	case p.handshake:
		s.handshakeResult(p, m, frame)
	case m.Result == nil && p.call != nil:
		s.checkCallError(p, m, frame)
	case m.Result == nil:
		if p.method == methodDiscover {
			s.discoverRefused = refusesModern(m.Error)
		}
		s.toClientAs(frame, m, key)
	case p.kind != "":
		s.checkListing(p, m, frame)
	case p.recheck:
		s.recheckHandshake(p, m, frame)
	case p.call != nil:
		s.checkResult(p, m, frame)
	default:
		s.checkInputRequests(p, m, frame)
	}
}

// recheckHandshake checks the instructions of a repeated initialize or
// server/discover against the verified contract.
func (s *Session) recheckHandshake(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	base := s.verified[p.profile]
	hs, err := readHandshake(m.Result, p.method == methodInitialize)
	if err != nil {
		s.track(p)
		s.closeUnreadableHandshake()
		return
	}
	instr := hs.instructions
	if p.method == methodDiscover {
		// The latest discover decides whether the server still speaks
		// 2026-07-28 to this client (see handshakeResult).
		v := s.obs[p.profile].ClientVersion
		s.discoverRefused = hs.supportedVersions != nil && !slices.Contains(hs.supportedVersions, v)
	}
	// A repeated initialize answered with another version than the
	// session's is a protocol change for the pin store to judge.
	o, known := s.obs[p.profile]
	protocolChanged := s.legacy && p.method == methodInitialize && known && hs.protocolVersion != o.Protocol
	if protocolChanged {
		o.Protocol = hs.protocolVersion
		s.obs[p.profile] = o
	}
	if base == nil || protocolChanged || !equalInstructions(base.Instructions, instr) {
		observed := overlay(base, nil, nil)
		observed.Instructions = instr
		if !s.midSessionDrift(p, observed) {
			return
		}
	}
	s.about = jsonrpc.IDKey(p.id)
	s.toClient(s.shapeHandshake(p.profile, frame, instr))
	s.about = ""
}

func equalInstructions(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// checkListing checks one page of a client's own listing against the
// verified contract for its profile, then forwards it or blocks.
func (s *Session) checkListing(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	base := s.verified[p.profile]
	items, next, err := listPage(m.Result, p.kind)
	if err == nil && base == nil {
		err = errors.New("no verified contract for the profile")
	}
	if err != nil {
		s.track(p)
		s.closeMalformedListing(p.kind, err)
		return
	}
	var page []contract.Definition
	drift := false
	seen := make(map[string]bool, len(items))
	for _, raw := range items {
		d, err := contract.NewDefinition(p.kind, raw)
		if err != nil {
			s.track(p)
			s.closeInvalid(err)
			return
		}
		if seen[d.Name] {
			s.track(p)
			ed := s.errorData(ReasonDuplicateName)
			ed.Changes = []ChangeRef{{Kind: string(p.kind), Name: contract.SafeName(d.Name), Labels: []string{"duplicate-name"}}}
			s.close(s.newClosure(CodeUnverified, "mcpseal: server "+s.cfg.Identity.Label+" listed two definitions under one name", ed))
			return
		}
		seen[d.Name] = true
		page = append(page, d)
		if pinned, ok := base.Lookup(p.kind, d.Name); !ok || pinned.Digest != d.Digest {
			drift = true
		}
	}
	// Follow the pages of this listing so that a definition dropped from
	// a complete listing is seen too.
	removed := s.seqs.track(p.profile, p.kind, p.cursor, next, page, base)
	if len(removed) > 0 {
		drift = true
	}
	// A listing that shows this session nothing new is checked against
	// the store again when the store moved: a drift another replica saw,
	// an approval, a forget.
	if (drift || s.pinsMoved()) && !s.midSessionDrift(p, overlay(base, page, removed)) {
		return
	}
	s.toClient(s.shapeListing(p, m, frame, items, page))
}

// midSessionDrift records a drift seen inside a verified session. It
// reports whether the answer may still be delivered (monitor posture, or a
// baseline that accepts it); otherwise the session is blocked and the
// request got the block error.
func (s *Session) midSessionDrift(p *pendingRequest, observed *contract.Contract) bool {
	s.track(p)
	s.about = jsonrpc.IDKey(p.id)
	defer func() { s.about = "" }()
	if !s.observe(p.profile, observed, true) {
		return false // closed: p was answered with the closure error
	}
	delete(s.pending, jsonrpc.IDKey(p.id))
	return true
}

// overlay returns base with page's definitions put in (replacing those of
// the same kind and name) and removed taken out.
func overlay(base *contract.Contract, page []contract.Definition, removed []contract.Definition) *contract.Contract {
	defs := make(map[contract.Kind][]contract.Definition)
	var instr *string
	if base != nil {
		instr = base.Instructions
		for _, k := range contract.Kinds {
			defs[k] = append([]contract.Definition(nil), base.Defs[k]...)
		}
	}
	drop := make(map[contract.Kind]map[string]bool)
	mark := func(d contract.Definition) {
		if drop[d.Kind] == nil {
			drop[d.Kind] = make(map[string]bool)
		}
		drop[d.Kind][d.Name] = true
	}
	for _, d := range page {
		mark(d)
	}
	for _, d := range removed {
		mark(d)
	}
	for k, names := range drop {
		kept := defs[k][:0]
		for _, d := range defs[k] {
			if !names[d.Name] {
				kept = append(kept, d)
			}
		}
		defs[k] = kept
	}
	for _, d := range page {
		defs[d.Kind] = append(defs[d.Kind], d)
	}
	return contract.New(defs, instr)
}
