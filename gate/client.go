package gate

import (
	"bytes"
	"errors"
	"strings"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// Protocol method names the gate acts on.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
	methodDiscover    = "server/discover"
	methodToolsCall   = "tools/call"
	// tasksPrefix starts every method of MCP tasks, in both generations.
	tasksPrefix     = "tasks/"
	methodCancelled = "notifications/cancelled"
)

// Keys of a 2026-07-28 request's params._meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// A pendingRequest is a client request forwarded to the server.
type pendingRequest struct {
	id     []byte
	key    string // jsonrpc.IDKey(id), its key in pending
	method string
	// handshake marks the initialize or server/discover that opens the
	// session: its result is held for verification.
	handshake bool
	modern    bool
	meta      *modernMeta // for a modern handshake
	// clientCaps and clientVersion are the capability names and the
	// protocol version a legacy initialize declared.
	clientCaps    []string
	clientVersion string
	// kind is set for list methods: the response is checked.
	kind    contract.Kind
	cursor  string
	profile string
	// recheck marks a repeated initialize or server/discover inside an
	// open session: its instructions are checked.
	recheck bool
	// call is set for a tools/call of a verified tool.
	call *CallInfo
	// held marks a call waiting for a decision or a person; frame is what
	// is forwarded once it is allowed, refusal what answers it otherwise.
	held    bool
	frame   []byte
	refusal Refusal
	answer  func([]byte) Verdict // judges a confirmation's answer
	// confirmed is the question a person said yes to for this call (a
	// 2026-07-28 retry), continues marks a call that carries the
	// server's round after such a call (mrtr.go).
	confirmed *askedCall
	continues bool
}

// modernMeta is what a 2026-07-28 request says about its client.
type modernMeta struct {
	protocolVersion string
	capNames        []string
	capabilities    []byte // raw clientCapabilities object
	clientInfo      []byte // raw, may be nil
	key             string // the profile key, once computed
}

func (m *modernMeta) profile() string {
	if m.key == "" {
		m.key = m.observation().Profile()
	}
	return m.key
}

// observation is what a modern request says of its client; a modern
// session runs on the version the request names.
func (m *modernMeta) observation() pin.Observation {
	return pin.Observation{ClientVersion: m.protocolVersion, Capabilities: m.capNames, Protocol: m.protocolVersion}
}

// FromClient takes one frame from the client.
func (s *Session) FromClient(frame []byte) []Out {
	s.out = nil
	s.fromClient(frame)
	return s.flush()
}

func (s *Session) fromClient(frame []byte) {
	m, err := jsonrpc.Peek(frame)
	if err != nil {
		s.log.Warn("invalid message from the client: not forwarded", "err", err)
		code, id := -32600, m.ID
		if errors.Is(err, jsonrpc.ErrSyntax) {
			code, id = -32700, nil
		}
		s.toClient(jsonrpc.NewError(id, code, "mcpseal: invalid JSON-RPC message; not forwarded", marshalData(s.errorData(ReasonInvalidMessage))))
		return
	}
	if m.Kind == jsonrpc.Batch {
		s.clientBatch(frame)
		return
	}
	if o := s.cfg.Hooks.Observer; o != nil {
		o.Took(ToClient, m)
	}
	switch s.phase {
	case phaseClosed:
		if m.Kind == jsonrpc.Request {
			s.toClient(s.closure.response(m.ID))
		}
	case phaseIdle:
		s.fromClientIdle(m, frame)
	case phaseHandshake, phaseListing:
		s.enqueue(m, frame)
	case phaseOpen:
		s.fromClientOpen(m, frame)
	}
}

func (s *Session) fromClientIdle(m jsonrpc.Message, frame []byte) {
	if m.Kind != jsonrpc.Request {
		s.enqueue(m, frame)
		return
	}
	if !s.admitRequest(m) {
		return
	}
	meta, _, err := parseModernMetaObject(m.Params, &s.metaCache)
	if err != nil {
		s.refuseUnreadable(m.ID)
		return
	}
	switch {
	case m.Method == methodInitialize && meta != nil:
		// Both generations at once: an initialize that names a 2026-07-28
		// version in its _meta could turn a session other clients share
		// as stateless (the gateway's) into a legacy one.
		s.refuseUnreadable(m.ID)
	case m.Method == methodInitialize:
		version, caps, err := initializeFacts(m.Params)
		if err != nil {
			s.refuseUnreadable(m.ID)
			return
		}
		s.forwardRequest(m, frame, &pendingRequest{method: m.Method, handshake: true, clientCaps: caps, clientVersion: version})
		s.phase = phaseHandshake
	case m.Method == methodDiscover && meta == nil:
		// A discover names no client: there is no profile to verify.
		s.refuseMissingVersion(m.ID)
	case m.Method == methodDiscover:
		s.forwardRequest(m, frame, &pendingRequest{method: m.Method, handshake: true, modern: true, meta: meta})
		s.phase = phaseHandshake
	case meta != nil:
		// A modern client may skip server/discover: hold its request and
		// verify the profile it names first.
		s.enqueue(m, frame)
		s.startRound(&round{profile: meta.profile(), modern: true, meta: meta, needDiscover: true, cause: jsonrpc.IDKey(m.ID)})
	default:
		s.enqueue(m, frame)
	}
}

func (s *Session) fromClientOpen(m jsonrpc.Message, frame []byte) {
	switch m.Kind {
	case jsonrpc.Notification:
		if m.Method == methodInitialized && s.dropInitialized {
			s.dropInitialized = false
			return
		}
		if !strings.HasPrefix(m.Method, "notifications/") {
			// A request without an id ("tools/call" as a notification):
			// a JSON-RPC server runs a notification and only keeps its
			// answer, so forwarding it would be a call no check saw.
			s.log.Warn("client notification with a request method: not forwarded", "server", s.cfg.Identity.ID, "method", contract.SafeName(m.Method))
			return
		}
		s.toServer(frame)
		return
	case jsonrpc.Response:
		// Answers are routed by whose request they answer: the gate's
		// own (a confirmation), or one the server sent (sampling, roots,
		// elicitation). The two id spaces never overlap (serverMessage).
		key := jsonrpc.IDKey(m.ID)
		if s.asks[key] != "" {
			s.confirmAnswer(key, m)
			return
		}
		if _, ok := s.serverReqs[key]; ok {
			delete(s.serverReqs, key)
			s.toServer(frame)
			return
		}
		s.log.Warn("client response to no request the server made: not forwarded", "server", s.cfg.Identity.ID)
		return
	}
	if !s.admitRequest(m) {
		return
	}
	profile := s.legacyProfile
	var (
		meta   *modernMeta
		params object // m.Params as read, once read
	)
	if !s.legacy {
		var err error
		if meta, params, err = parseModernMetaObject(m.Params, &s.metaCache); err != nil {
			s.refuseUnreadable(m.ID)
			return
		}
		if meta == nil {
			// A request with no protocol version in a modern session: it
			// cannot be tied to a verified profile.
			s.refuseMissingVersion(m.ID)
			return
		}
		profile = meta.profile()
		if m.Method == methodInitialize {
			s.refuseUnreadable(m.ID) // no initialize in a 2026-07-28 session
			return
		}
		s.useSeq++
		if s.verified[profile] == nil {
			if len(s.verified) >= s.cfg.Limits.MaxProfiles && !s.evictIdleProfile() {
				s.refuse(m.ID, ReasonQueueFull, "mcpseal: too many client profiles in one session; not forwarded")
				return
			}
			s.lastUse[profile] = s.useSeq
			s.enqueue(m, frame)
			s.startRound(&round{profile: profile, modern: true, meta: meta, needDiscover: true, cause: jsonrpc.IDKey(m.ID)})
			return
		}
		s.lastUse[profile] = s.useSeq
	}
	p := &pendingRequest{method: m.Method, profile: profile}
	if kind, ok := contract.KindForListMethod(m.Method); ok {
		p.kind = kind
		var err error
		if p.cursor, err = paramString(m.Params, "cursor"); err != nil {
			s.refuseUnreadable(m.ID)
			return
		}
	}
	if strings.HasPrefix(m.Method, tasksPrefix) {
		// tasks/result (2025-11-25) and tasks/get (the 2026-07-28 tasks
		// extension) carry a tool's result the Result hook (result limits,
		// the pinned outputSchema) never saw; the others serve tasks the
		// gate does not run.
		s.refuseTask(m.ID)
		return
	}
	switch m.Method {
	case methodInitialize, methodDiscover:
		p.recheck = true
	case methodToolsCall:
		if params == nil {
			var err error
			if params, err = readObject(m.Params); err != nil {
				s.refuseUnreadable(m.ID)
				return
			}
		}
		name, ok, err := params.getString("name", false)
		args, _, aerr := params.get("arguments")
		if err != nil || aerr != nil || !ok {
			// {"name":"a","Name":"b"}: a case-insensitive decoder on the
			// server could call another tool than the one checked here;
			// two "arguments" could be validated as one and run as the other.
			s.toClient(jsonrpc.NewError(m.ID, -32602, "mcpseal: tools/call params have no single unambiguous name and arguments; not forwarded", marshalData(s.errorData(ReasonInvalidMessage))))
			return
		}
		if _, task, err := params.get("task"); err != nil || task {
			// A task-augmented call is answered by a task handle, and its
			// result comes later on tasks/result, which is refused.
			s.refuseTask(m.ID)
			return
		}
		def, ok := s.verified[profile].Lookup(contract.Tools, name)
		// Under a drift monitor forwarded, the pinned definition counts
		// too (CallInfo.Pinned).
		var pinned *contract.Definition
		pins := s.driftPins[profile]
		if pins != nil {
			if d, found := pins.Lookup(contract.Tools, name); found {
				pinned = &d
			}
		}
		if !ok && pinned != nil {
			// A pinned tool the server stopped listing may still be
			// answered: judged as pinned, not waved through unjudged.
			def, ok = *pinned, true
		}
		hidden := ok && s.cfg.Hidden != nil && s.cfg.Hidden(jsonrpc.IDKey(m.ID), name)
		switch {
		case hidden:
			// Not in this caller's view of the contract: answered, to the
			// byte, as a tool that is not there (the case below), under
			// every posture.
			s.log.Info("call to a tool hidden from its caller refused", "server", s.cfg.Identity.ID, "tool", contract.SafeName(name))
			s.refuseUnknownTool(m.ID, name)
			return
		case !ok:
			// Under every posture: monitor releases what drifts in the
			// listings, but the host's call decisions (policy, schemas,
			// confirmation, the lock) need a definition to judge, and a
			// tool that is neither listed nor pinned has none.
			s.log.Warn("call to a tool outside the verified contract refused", "server", s.cfg.Identity.ID, "tool", contract.SafeName(name))
			s.refuseUnknownTool(m.ID, name)
			return
		default:
			// The host's decisions (policy, schemas, confirmation) apply
			// under every posture: monitor is about drift, not calls.
			if s.refuseByCaller(m.ID, name, def.Digest) {
				return
			}
			p.call = &CallInfo{Profile: profile, Tool: def, Params: m.Params, Arguments: args, ClientCapabilities: s.caps[profile],
				Drifted: pins != nil, Pinned: pinned}
			state, ours, err := gateState(params)
			if err != nil {
				s.refuseUnreadable(m.ID)
				return
			}
			if ours {
				// The person's answer to the gate's question (mrtr.go).
				s.confirmRetry(m, frame, p, def, args, state)
				return
			}
			if state != "" {
				if c := s.continuesConfirmed(p, def, args, state); c != nil {
					p.continues, p.confirmed = true, c // and its next round too
				}
			}
			if s.cfg.Hooks.Call != nil {
				p.id, p.frame, p.held = m.ID, frame, true
				s.track(p)
				p.call.Request = p.key
				s.decideCall(p, s.cfg.Hooks.Call(*p.call), 0)
				return
			}
		}
	}
	s.forwardRequest(m, frame, p)
}

// evictIdleProfile forgets the verified profile least recently used that
// no request in flight (or round) uses, when Config.EvictIdleProfiles
// allows it; it reports whether one went.
func (s *Session) evictIdleProfile() bool {
	if !s.cfg.EvictIdleProfiles {
		return false
	}
	busy := make(map[string]bool, len(s.pending)+1)
	for _, p := range s.pending {
		busy[p.profile] = true
	}
	if s.round != nil {
		busy[s.round.profile] = true
	}
	victim, at := "", uint64(0)
	for _, prof := range sortedKeys(s.verified) {
		if u := s.lastUse[prof]; !busy[prof] && (victim == "" || u < at) {
			victim, at = prof, u
		}
	}
	if victim == "" {
		return false
	}
	delete(s.verified, victim)
	delete(s.driftPins, victim)
	delete(s.caps, victim)
	delete(s.obs, victim)
	delete(s.lastUse, victim)
	if s.pages != nil && s.pages.profile == victim {
		s.pages = nil
	}
	s.log.Info("least recently used client profile forgotten to make room for a new one", "server", s.cfg.Identity.ID)
	return true
}

// refuseByCaller applies Config.Admit to a call of tool that the caller
// may make; it answers a refused call and reports whether it did.
func (s *Session) refuseByCaller(id []byte, tool, digest string) bool {
	if s.cfg.Admit == nil {
		return false
	}
	key := jsonrpc.IDKey(id)
	r := s.cfg.Admit(key, tool)
	if r == nil {
		return false
	}
	if r.Code == 0 {
		r.Code = CodeRefused
	}
	if r.Message == "" {
		r.Message = "mcpseal: the call was refused for its caller; not forwarded"
	}
	name := contract.SafeName(tool)
	s.toClient(jsonrpc.NewError(id, r.Code, r.Message, s.refusalData(*r, name)))
	s.event(Event{Op: "call", Outcome: "refused", Code: r.Reason, Kind: contract.Tools, Name: name, Digest: digest, Request: key})
	return true
}

// refuseUnknownTool answers a tools/call of a tool that is not in the
// verified contract (or, the same to its caller, hidden from it).
func (s *Session) refuseUnknownTool(id []byte, name string) {
	d := s.errorData(ReasonUnknownTool)
	d.Tool = contract.SafeName(name)
	s.event(Event{Op: "call", Outcome: "refused", Code: ReasonUnknownTool, Kind: contract.Tools, Name: d.Tool, Request: jsonrpc.IDKey(id)})
	s.toClient(jsonrpc.NewError(id, CodeUnknownTool, "mcpseal: tool "+d.Tool+" is not in the verified contract of server "+s.cfg.Identity.Label+"; not forwarded", marshalData(d)))
}

// admitRequest refuses a request the gate cannot track: an id already in
// flight (its own or the client's) or one over the pending limit.
func (s *Session) admitRequest(m jsonrpc.Message) bool {
	key := jsonrpc.IDKey(m.ID)
	if _, ok := s.own[key]; ok {
		s.refuse(m.ID, ReasonIDCollision, "mcpseal: request id collides with a request in flight; not forwarded")
		return false
	}
	if _, ok := s.pending[key]; ok {
		s.refuse(m.ID, ReasonIDCollision, "mcpseal: request id is already in flight; not forwarded")
		return false
	}
	if s.abandoned.has(key) {
		// The server may still answer the cancelled request under it.
		s.refuse(m.ID, ReasonIDCollision, "mcpseal: request id is still in use at the server (an earlier request under it was cancelled and not answered yet); not forwarded")
		return false
	}
	if len(s.pending) >= s.cfg.Limits.MaxPending {
		s.refuse(m.ID, ReasonQueueFull, "mcpseal: too many requests in flight; not forwarded")
		return false
	}
	return true
}

// refuseUnreadable answers a request whose params the gate must read and
// cannot read unambiguously (a repeated member, a case variant of one, a
// wrong type).
func (s *Session) refuseUnreadable(id []byte) {
	s.toClient(jsonrpc.NewError(id, -32602, "mcpseal: request params are not readable unambiguously (a repeated or case-variant member, or a wrong type); not forwarded", marshalData(s.errorData(ReasonInvalidMessage))))
}

func (s *Session) refuseMissingVersion(id []byte) {
	s.toClient(jsonrpc.NewError(id, -32602, "mcpseal: request lacks _meta[\""+metaProtocolVersion+"\"]", marshalData(s.errorData(ReasonInvalidMessage))))
}

// refuseTask answers a task-augmented tools/call or any tasks/ request:
// the gate checks results on the tools/call answer only, so it does not
// run calls as tasks.
func (s *Session) refuseTask(id []byte) {
	s.log.Info("task-augmented call or task result refused", "server", s.cfg.Identity.ID)
	s.refuse(id, ReasonTaskUnsupported, "mcpseal: tools run as tasks are not supported (the gate checks a call's result on its answer); call the tool without \"task\"; not forwarded")
}

func (s *Session) refuse(id []byte, reason, message string) {
	s.toClient(jsonrpc.NewError(id, CodeRefused, message, marshalData(s.errorData(reason))))
}

func (s *Session) forwardRequest(m jsonrpc.Message, frame []byte, p *pendingRequest) {
	// A copy: a slice of the frame would keep the whole request alive
	// while it awaits its answer, counted by nothing but MaxPending (red
	// team: 64 unanswered 1 MiB requests kept 63 MiB).
	p.id = bytes.Clone(m.ID)
	s.track(p)
	if p.kind != "" {
		if result, ok := s.takePage(p, m.Params); ok {
			p.frame = frame
			s.answerFromPage(p, result)
			return
		}
	}
	s.toServerAs(frame, m, p.key)
}

// enqueue holds a client message until verification ends.
func (s *Session) enqueue(m jsonrpc.Message, frame []byte) {
	if len(s.queue) >= s.cfg.Limits.MaxQueued || s.queueBytes+len(frame) > s.cfg.Limits.MaxQueuedBytes {
		if m.Kind == jsonrpc.Request {
			s.refuse(m.ID, ReasonQueueFull, "mcpseal: too many messages waiting for the contract check; not forwarded")
		} else {
			s.log.Warn("client message dropped: the queue is full")
		}
		return
	}
	s.queue = append(s.queue, frame)
	s.queueBytes += len(frame)
}

// release delivers what verification held: the handshake result, the
// server's held messages, then the client's queued messages in order.
func (s *Session) release(result []byte) {
	s.phase = phaseOpen
	if result != nil {
		s.toClient(result)
	}
	for _, f := range s.held {
		s.serverMessage(f)
	}
	s.held, s.heldBytes = nil, 0
	// The queue is replayed from a field, not a local, so that Fail can
	// still answer what was not replayed when a hook panics. A queued
	// request that starts another round or closes the session gets the
	// rest queued (or answered) in order by fromClient; a round that ends
	// at once replays its own queue first, then the rest of this one.
	s.replay = append(s.queue, s.replay...)
	s.queue, s.queueBytes = nil, 0
	for len(s.replay) > 0 {
		f := s.replay[0]
		s.replay = s.replay[1:]
		// Out of the queue and not yet anywhere else: should this step
		// fail, Fail finds the request here (a listing answered from the
		// kept pages is never in pending while it is shaped).
		s.replaying = f
		s.fromClient(f)
		s.replaying = nil
	}
}

// metaCache remembers, by the raw _meta and by protocol version and raw
// capabilities, the capability names and profile key a modern client's
// requests declare:
// a client sends the same _meta with every request, and reading its
// capabilities and building its key each time cost a call more than the
// rest of the lookup. last is the raw _meta added last: params are read
// knowing it (readObjectKnowing), so the same _meta is not read again.
type metaCache struct {
	byRaw map[string]*modernMeta
	last  string
}

// maxMetaCache bounds it; a client has one set of capabilities. A _meta
// longer than maxMetaCached is read every time and not kept: 32 of a
// frame's 16 MiB each would be half a gigabyte held for one session.
const (
	maxMetaCache  = 32
	maxMetaCached = 4 << 10
)

// parseModernMetaObject reads the 2026-07-28 client facts from
// params._meta. It returns nil when the request carries no protocol
// version, and an error when params, _meta or the facts in it cannot be
// read unambiguously; and params as read, for the caller's further
// lookups. cache, when not nil, remembers what earlier requests declared.
func parseModernMetaObject(params []byte, cache *metaCache) (*modernMeta, object, error) {
	if params == nil {
		return nil, nil, nil
	}
	var last string
	if cache != nil {
		last = cache.last
	}
	po, err := readObjectKnowing(params, "_meta", last)
	if err != nil {
		return nil, nil, err
	}
	metaRaw, ok, err := po.getObject("_meta")
	if err != nil || !ok {
		return nil, po, err
	}
	if c := cache.get(string(metaRaw)); c != nil {
		// Byte for byte the _meta of a request before (a client sends
		// the same with every request): read the same way.
		mm := *c
		return &mm, po, nil
	}
	mo, err := readObject(metaRaw)
	if err != nil {
		return nil, nil, err
	}
	pv, ok, err := mo.getString(metaProtocolVersion, false)
	if err != nil || !ok {
		return nil, po, err
	}
	caps, ok, err := mo.getObject(metaClientCapabilities)
	if err != nil {
		return nil, nil, err
	}
	clientInfo, _, err := mo.getObject(metaClientInfo)
	if err != nil {
		return nil, nil, err
	}
	ck := "\x00" + pv + "\x00" + string(caps) // no _meta object starts with a NUL
	if c := cache.get(ck); c != nil {
		// The same facts as a request before: share what was read of
		// them; clientInfo (sent on to the server) is this request's own.
		mm := *c
		mm.clientInfo = clientInfo
		return &mm, po, nil
	}
	mm := &modernMeta{protocolVersion: pv, clientInfo: clientInfo}
	if ok {
		if mm.capNames, err = memberNames(caps); err != nil {
			return nil, nil, err
		}
		mm.capabilities = caps
	}
	mm.profile()
	if cache != nil && len(metaRaw) <= maxMetaCached {
		if len(cache.byRaw) >= maxMetaCache {
			clear(cache.byRaw)
		}
		c := *mm
		c.capabilities = append([]byte(nil), caps...) // frames are not kept
		c.clientInfo = nil
		cache.byRaw[ck] = &c
		whole := c
		whole.clientInfo = append([]byte(nil), clientInfo...)
		if clientInfo == nil {
			whole.clientInfo = nil
		}
		raw := string(metaRaw)
		cache.byRaw[raw] = &whole
		cache.last = raw
	}
	return mm, po, nil
}

// get is what cache remembers under key (nil for a nil cache).
func (cache *metaCache) get(key string) *modernMeta {
	if cache == nil {
		return nil
	}
	return cache.byRaw[key]
}

// initializeFacts reads what a legacy initialize declares: the protocol
// version asked for and the names of params.capabilities.
func initializeFacts(params []byte) (version string, caps []string, err error) {
	if params == nil {
		return "", nil, nil
	}
	if version, _, err = lookupString(params, "protocolVersion", false); err != nil {
		return "", nil, err
	}
	raw, ok, err := lookupObject(params, "capabilities")
	if err != nil || !ok {
		return version, nil, err
	}
	caps, err = memberNames(raw)
	return version, caps, err
}

// paramString returns the string member key of params ("" when absent or
// null); err when it is there but not readable as a string.
func paramString(params []byte, key string) (string, error) {
	if params == nil {
		return "", nil
	}
	v, _, err := lookupString(params, key, true)
	return v, err
}

// batchVersion is the only protocol version that allows JSON-RPC batches.
const batchVersion = "2025-03-26"

// maxBatch bounds the messages of one batch; a batch of thousands of
// calls is a way to flood the server, not a use of the protocol.
const maxBatch = 100

// batchesAllowed reports whether the session negotiated 2025-03-26.
func (s *Session) batchesAllowed() bool {
	return s.legacy && s.phase != phaseClosed && s.legacyVersion == batchVersion
}

// clientBatch handles a JSON-RPC batch from the client. Under 2025-03-26
// each message is gated on its own, exactly as if it had come alone, and
// forwarded as its own frame, so nothing the gate did not check reaches the
// server; answers come back one by one, which JSON-RPC clients match by id.
// Under every other version batches do not exist: each request in it gets
// a refusal so that the client does not wait for it.
func (s *Session) clientBatch(frame []byte) {
	elems, err := jsonrpc.Elements(frame)
	if err != nil || len(elems) == 0 || len(elems) > maxBatch || !s.batchesAllowed() {
		s.log.Warn("JSON-RPC batch from the client refused", "messages", len(elems))
		d := marshalData(s.errorData(ReasonBatch))
		msg := "mcpseal: JSON-RPC batches are only allowed by protocol " + batchVersion + " (at most 100 messages); not forwarded"
		answered := false
		for _, e := range elems {
			if m, err := jsonrpc.Peek(e); err == nil && m.Kind == jsonrpc.Request {
				s.toClient(jsonrpc.NewError(m.ID, CodeRefused, msg, d))
				answered = true
			}
		}
		if !answered {
			s.toClient(jsonrpc.NewError(nil, CodeRefused, msg, d))
		}
		return
	}
	for _, e := range elems {
		s.fromClient(append([]byte(nil), e...))
	}
}
