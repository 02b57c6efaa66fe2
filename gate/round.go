package gate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// A round is one verification of one profile: the gate's own discover (for
// a modern client that skipped it) and listings, then the pin check.
type round struct {
	profile string
	modern  bool
	meta    *modernMeta
	// result is the held handshake result, released on success; nil when
	// the round was started by an ordinary modern request.
	result []byte
	// handshakeID answers the held handshake on failure.
	handshakeID []byte
	// cause is the id key of the client request that started the round:
	// its events are attributed to that request's caller.
	cause string

	needDiscover bool
	afterConnect bool // the after_connect hook was asked
	instructions *string
	listings     map[contract.Kind]*listing
	total        int
	kept         int // bytes of the listings' results kept (see keepPages)
	listed       int // bytes of the listings' results read, all held until the verdict
	deadline     time.Time
}

type listing struct {
	kind  contract.Kind
	items [][]byte
	// results are the pages' raw results by the cursor that asked for
	// them, kept for the client (see keepPages).
	results map[string][]byte
	cursors map[string]bool
	pages   int
	done    bool
	// tolerant: the server's capabilities were not known (its discover
	// failed), so any listing error counts as an empty listing.
	tolerant bool
}

type ownRequest struct {
	discover bool
	kind     contract.Kind
	cursor   string
}

// NewIDPrefix returns a random prefix for the gate's own request ids.
func NewIDPrefix() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "mcpseal-" + hex.EncodeToString(b[:])
}

func (s *Session) newOwnID() []byte {
	for {
		s.nextID++
		id := strconv.AppendQuote(nil, s.cfg.IDPrefix+"-"+strconv.Itoa(s.nextID))
		if _, taken := s.pending[jsonrpc.IDKey(id)]; !taken {
			return id
		}
	}
}

func (s *Session) startRound(r *round) {
	s.pages = nil
	s.phase = phaseListing
	s.round = r
	r.deadline = s.cfg.Now().Add(s.cfg.Limits.VerifyTimeout)
	if r.meta != nil {
		s.obs[r.profile] = r.meta.observation()
	}
	if r.needDiscover {
		s.sendOwn(methodDiscover, &ownRequest{discover: true}, s.ownParams(r, ""))
		return
	}
	s.startListings(r, nil, false)
}

// startListings asks for the first page of every kind the server's
// capabilities offer (all four when they are unknown).
func (s *Session) startListings(r *round, caps []byte, unknown bool) {
	kinds := contract.Kinds
	if !unknown {
		kinds = offered(caps)
	}
	s.startListingsOf(r, kinds, unknown)
}

// startListingsOf asks for the first page of each of kinds.
func (s *Session) startListingsOf(r *round, kinds []contract.Kind, unknown bool) {
	r.listings = make(map[contract.Kind]*listing)
	for _, k := range kinds {
		r.listings[k] = &listing{kind: k, cursors: make(map[string]bool), results: make(map[string][]byte), tolerant: unknown}
		s.sendOwn(k.ListMethod(), &ownRequest{kind: k}, s.ownParams(r, ""))
	}
	s.maybeFinish()
}

// offers reports whether server capabilities (an object readHandshake
// accepted, or nil) offer listings of kind k.
func offers(caps []byte, k contract.Kind) bool {
	if caps == nil {
		return false
	}
	name := "resources"
	switch k {
	case contract.Tools:
		name = "tools"
	case contract.Prompts:
		name = "prompts"
	}
	_, ok, err := lookup(caps, name)
	return ok || err != nil // unreadable offers: list it (readHandshake refused that already)
}

func (s *Session) ownParams(r *round, cursor string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	if cursor != "" {
		b.WriteString(`"cursor":`)
		b.Write(jsonrpc.AppendString(nil, cursor))
		sep = ","
	}
	if r.modern && r.meta != nil {
		b.WriteString(sep)
		b.WriteString(`"_meta":{`)
		b.WriteString(strconv.Quote(metaProtocolVersion) + ":")
		b.Write(jsonrpc.AppendString(nil, r.meta.protocolVersion))
		if r.meta.capabilities != nil {
			b.WriteString("," + strconv.Quote(metaClientCapabilities) + ":")
			b.Write(r.meta.capabilities)
		}
		if r.meta.clientInfo != nil {
			b.WriteString("," + strconv.Quote(metaClientInfo) + ":")
			b.Write(r.meta.clientInfo)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (s *Session) sendOwn(method string, o *ownRequest, params []byte) {
	id := s.newOwnID()
	s.own[jsonrpc.IDKey(id)] = o
	s.toServer(jsonrpc.NewRequest(id, method, params))
}

// handshakeResult handles the result of the client's initialize or
// server/discover that opened the session.
func (s *Session) handshakeResult(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	if m.Error != nil {
		// A legacy server refusing a discover probe, or a refused
		// initialize: pass the error on at once so the client can fall
		// back, and wait for its next handshake.
		if p.modern {
			s.discoverRefused = refusesModern(m.Error)
		}
		s.phase = phaseIdle
		s.toClient(frame)
		return
	}
	hs, err := readHandshake(m.Result, !p.modern)
	if err != nil {
		s.phase = phaseIdle
		s.track(p) // so that close answers it
		s.closeUnreadableHandshake()
		return
	}
	if p.modern && hs.supportedVersions != nil && !slices.Contains(hs.supportedVersions, p.meta.protocolVersion) {
		// A discover that answers without the client's version declines
		// the 2026-07-28 generation as surely as an error does: clients
		// fall back to initialize. Its result (instructions included) is
		// not released unverified; the client gets the protocol's own
		// error, naming the versions the server listed.
		s.discoverRefused = true
		s.phase = phaseIdle
		s.toClient(jsonrpc.NewError(p.id, codeUnsupportedVersion, "mcpseal: the server does not support the requested protocol version", unsupportedVersionData(hs.supportedVersions, p.meta.protocolVersion)))
		return
	}
	if p.modern {
		s.discoverRefused = false
	}
	caps := hs.capabilities
	r := &round{result: frame, handshakeID: p.id, instructions: hs.instructions, cause: jsonrpc.IDKey(p.id)}
	if p.modern {
		r.modern, r.meta, r.profile = true, p.meta, p.meta.profile()
		s.caps[r.profile] = p.meta.capNames
		s.obs[r.profile] = p.meta.observation()
	} else {
		// The profile is what the client declared; the version the server
		// answered is pinned with it, never a key of its own (a server
		// must not open a profile by answering another version).
		version := hs.protocolVersion
		o := pin.Observation{ClientVersion: p.clientVersion, Capabilities: p.clientCaps, Protocol: version, DiscoverRefused: s.discoverRefused}
		s.legacy = true
		s.legacyVersion = version
		s.legacyProfile = o.Profile()
		s.legacyOffers = offered(caps)
		r.profile = s.legacyProfile
		s.caps[r.profile] = p.clientCaps
		s.obs[r.profile] = o
		// The server may refuse listings until it is told the client is
		// initialized; the gate says so itself and drops the client's copy.
		s.toServer(jsonrpc.NewNotification(methodInitialized, nil))
		s.dropInitialized = true
	}
	s.phase = phaseListing
	s.round = r
	r.deadline = s.cfg.Now().Add(s.cfg.Limits.VerifyTimeout)
	s.startListings(r, caps, false)
}

// handshake is what the gate reads of an initialize or server/discover
// result.
type handshake struct {
	instructions    *string
	capabilities    []byte // an object, or nil when absent
	protocolVersion string // legacy only
	// supportedVersions of a server/discover result; nil when absent.
	supportedVersions []string
}

// codeUnsupportedVersion is the 2026-07-28 UnsupportedProtocolVersion.
const codeUnsupportedVersion = -32022

// unsupportedVersionData is the data of codeUnsupportedVersion: the
// versions the server listed that are protocol dates (nothing else a server
// wrote is echoed) and the version the client asked for.
func unsupportedVersionData(supported []string, requested string) []byte {
	out := []string{}
	for _, v := range supported {
		if isProtocolDate(v) && len(out) < 16 {
			out = append(out, v)
		}
	}
	b, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{out, requested})
	return b
}

// isProtocolDate reports whether v has the form of a protocol version.
func isProtocolDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range []byte(v) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// refusesModern reports whether a server/discover error declines the
// 2026-07-28 generation: anything but an UnsupportedProtocolVersion whose
// data lists a 2026-07-28 or later version the client can retry with.
func refusesModern(errObj []byte) bool {
	if errorCode(errObj) != codeUnsupportedVersion {
		return true
	}
	data, ok, err := lookupObject(errObj, "data")
	if err != nil || !ok {
		return true
	}
	raw, ok, err := lookup(data, "supported")
	if err != nil || !ok {
		return true
	}
	vs, err := stringArray(raw)
	if err != nil {
		return true
	}
	for _, v := range vs {
		if isProtocolDate(v) && v >= "2026-07-28" {
			return false
		}
	}
	return true
}

// stringArray decodes a raw JSON array of strings.
func stringArray(raw []byte) ([]string, error) {
	elems, err := jsonrpc.Elements(raw)
	if err != nil {
		return nil, errUnreadable
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		v, err := jsonrpc.DecodeString(e)
		if err != nil {
			return nil, errUnreadable
		}
		out = append(out, v)
	}
	return out, nil
}

// readHandshake reads a handshake result. Anything in it that the gate or
// the client reads and that cannot be read one way only — a repeated
// member name at any depth, top-level or capability names equal up to
// case, instructions that are not a string, capabilities that are not an
// object, a legacy result without a string protocolVersion — is an error:
// the session is closed rather than the member read as absent.
func readHandshake(result []byte, legacy bool) (handshake, error) {
	var hs handshake
	if err := checkServerResult(result); err != nil {
		return hs, err
	}
	instr, ok, err := lookupString(result, "instructions", true)
	if err != nil {
		return hs, err
	}
	if ok {
		hs.instructions = &instr
	}
	if hs.capabilities, _, err = lookupObject(result, "capabilities"); err != nil {
		return hs, err
	}
	if hs.capabilities != nil {
		if _, err := memberNames(hs.capabilities); err != nil {
			return hs, err
		}
	}
	if legacy {
		if hs.protocolVersion, ok, err = lookupString(result, "protocolVersion", false); err != nil || !ok {
			return hs, errUnreadable
		}
		return hs, nil
	}
	raw, ok, err := lookup(result, "supportedVersions")
	if err != nil {
		return hs, err
	}
	if ok {
		if hs.supportedVersions, err = stringArray(raw); err != nil {
			return hs, err
		}
	}
	return hs, nil
}

func (s *Session) closeUnreadableHandshake() {
	s.closeUnverified(ReasonUnreadable, "mcpseal: server "+s.cfg.Identity.Label+" sent a handshake result that cannot be read unambiguously (a repeated or case-variant member, or a wrong type)")
}

// ownResponse handles the answer to one of the gate's own requests.
func (s *Session) ownResponse(o *ownRequest, m jsonrpc.Message) {
	r := s.round
	if r == nil || s.phase != phaseListing {
		return
	}
	if o.discover {
		if m.Error != nil {
			// A server that cannot be discovered: list everything it
			// will list, with no instructions.
			s.log.Warn("server/discover failed during verification; listing every kind", "server", s.cfg.Identity.ID)
			s.startListings(r, nil, true)
			return
		}
		hs, err := readHandshake(m.Result, false)
		if err != nil {
			s.closeUnreadableHandshake()
			return
		}
		r.instructions = hs.instructions
		s.startListings(r, hs.capabilities, false)
		return
	}
	l := r.listings[o.kind]
	if l == nil || l.done {
		return
	}
	if m.Error != nil {
		code := errorCode(m.Error)
		if l.tolerant || code == -32601 {
			l.done = true
			s.maybeFinish()
			return
		}
		s.closeUnverified(ReasonListingFailed, fmt.Sprintf("mcpseal: server %s failed to list its %s (error %d)", s.cfg.Identity.Label, o.kind, code))
		return
	}
	// The page is held until the verdict, and its items and the kept
	// result would otherwise be slices of the whole frame: a server that
	// pads its frames outside "result" held 82 MiB under a 1 MiB
	// MaxListingBytes (red team). The copy holds what is counted.
	m.Result = bytes.Clone(m.Result)
	items, next, err := listPage(m.Result, o.kind)
	if err != nil {
		s.closeMalformedListing(o.kind, err)
		return
	}
	if r.listed += len(m.Result); r.listed > s.cfg.Limits.MaxListingBytes {
		s.closeUnverified(ReasonListingTooLarge, fmt.Sprintf("mcpseal: server %s listed more than %d bytes of definitions", s.cfg.Identity.Label, s.cfg.Limits.MaxListingBytes))
		return
	}
	l.pages++
	l.items = append(l.items, items...)
	if r.kept+len(m.Result) <= s.cfg.Limits.MaxHeldBytes {
		// Kept for the client's first listing (pages.go), within the
		// bytes the gate would hold of the server's messages; a page past
		// that is the server's to answer again.
		l.results[o.cursor] = m.Result
		r.kept += len(m.Result)
	}
	r.total += len(items)
	if r.total > s.cfg.Limits.MaxDefinitions {
		s.closeUnverified(ReasonTooMany, fmt.Sprintf("mcpseal: server %s listed more than %d definitions", s.cfg.Identity.Label, s.cfg.Limits.MaxDefinitions))
		return
	}
	if next == "" {
		l.done = true
		s.maybeFinish()
		return
	}
	if l.cursors[next] {
		s.closeUnverified(ReasonPaging, fmt.Sprintf("mcpseal: server %s repeated a %s cursor (a paging loop)", s.cfg.Identity.Label, o.kind))
		return
	}
	if l.pages >= s.cfg.Limits.MaxPages {
		s.closeUnverified(ReasonPaging, fmt.Sprintf("mcpseal: server %s listed more than %d pages of %s", s.cfg.Identity.Label, s.cfg.Limits.MaxPages, o.kind))
		return
	}
	l.cursors[next] = true
	s.sendOwn(o.kind.ListMethod(), &ownRequest{kind: o.kind, cursor: next}, s.ownParams(r, next))
}

// listPage splits a list result into its definitions and next cursor. A
// result that cannot be read one way only (see checkServerResult), or
// whose definitions are not an array or cursor not a string, is an error.
func listPage(result []byte, k contract.Kind) (items [][]byte, next string, err error) {
	// The definitions themselves are checked one by one by
	// contract.NewDefinition, which names the one at fault.
	if err := checkServerResult(result, k.ResultMember()); err != nil {
		return nil, "", err
	}
	arr, ok, err := lookup(result, k.ResultMember())
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", fmt.Errorf("no %s member", k)
	}
	if next, _, err = lookupString(result, "nextCursor", true); err != nil {
		return nil, "", err
	}
	items, err = jsonrpc.Elements(arr)
	return items, next, err
}

// closeMalformedListing closes the session for a listing page listPage
// refused: unreadable when it can be read more than one way.
func (s *Session) closeMalformedListing(k contract.Kind, err error) {
	reason := ReasonListingFailed
	if errors.Is(err, errUnreadable) {
		reason = ReasonUnreadable
	}
	s.closeUnverified(reason, fmt.Sprintf("mcpseal: server %s sent a malformed %s listing", s.cfg.Identity.Label, k))
}

// errorCode returns the code of a JSON-RPC error object, or 0 when it has
// none that can be read one way only.
func errorCode(raw []byte) int {
	c, ok, err := lookup(raw, "code")
	if err != nil || !ok {
		return 0
	}
	n, err := strconv.Atoi(string(c))
	if err != nil {
		return 0
	}
	return n
}

// maybeFinish ends the round when every listing is complete.
func (s *Session) maybeFinish() {
	r := s.round
	if r == nil || r.needDiscover && r.listings == nil {
		return
	}
	for _, l := range r.listings {
		if !l.done {
			return
		}
	}
	raw := make(map[contract.Kind][][]byte)
	for k, l := range r.listings {
		raw[k] = l.items
	}
	c, err := contract.Parse(raw, r.instructions)
	if err != nil {
		s.closeInvalid(err)
		return
	}
	if ch, ok := duplicateName(c); ok {
		d := s.errorData(ReasonDuplicateName)
		d.Changes = []ChangeRef{ch}
		s.close(s.newClosure(CodeUnverified, "mcpseal: server "+s.cfg.Identity.Label+" listed two definitions under one name", d))
		return
	}
	if !s.observe(r.profile, c, false) {
		return
	}
	if s.cfg.Hooks.AfterConnect != nil && !r.afterConnect {
		r.afterConnect = true
		s.decideConnect(r, c, s.cfg.Hooks.AfterConnect(r.profile, c), 0)
		return
	}
	s.finishRound(r, c)
}

// decideConnect applies the after_connect verdict: release the session,
// close it, or wait for a slow provider (the round's deadline still runs).
func (s *Session) decideConnect(r *round, c *contract.Contract, v Verdict, depth int) {
	switch {
	case v.Kind == Allow:
		s.finishRound(r, c)
	case v.Kind == Later && v.Work != nil && s.cfg.Dispatch != nil && depth < 2:
		s.cfg.Dispatch(v.Work, func(v2 Verdict) []Out {
			s.out = nil
			if s.round == r && s.phase == phaseListing {
				s.decideConnect(r, c, v2, depth+1)
			}
			return s.flush()
		})
	default:
		ref := v.Refusal
		if v.Kind != Refuse {
			ref = Refusal{Code: CodeRefused, Message: "mcpseal: the session's after_connect decision could not be made", Reason: "undecided"}
		}
		s.event(Event{Op: "connect", Outcome: "refused", Code: ref.Reason})
		s.close(s.refusalClosure(ref))
	}
}

// finishRound releases a verified round.
func (s *Session) finishRound(r *round, c *contract.Contract) {
	if r.meta != nil && s.caps[r.profile] == nil {
		s.caps[r.profile] = r.meta.capNames
	}
	// The hooks run while the round still holds the handshake's id, so
	// that Fail answers it if one of them panics.
	s.event(Event{Op: "connect", Outcome: "verified", Count: c.Len()})
	result := r.result
	if result != nil {
		result = s.shapeHandshake(r.profile, result, c.Instructions)
	}
	s.round = nil
	s.keepPages(r)
	s.release(result)
}

func (s *Session) closeInvalid(err error) {
	d := s.errorData(ReasonInvalidDefinition)
	if de, ok := err.(*contract.DefinitionError); ok {
		d.Changes = []ChangeRef{{Kind: string(de.Kind), Name: contract.SafeName(de.Name), Labels: []string{"invalid-definition", de.Reason}}}
	}
	s.close(s.newClosure(CodeUnverified, "mcpseal: server "+s.cfg.Identity.Label+" sent a definition with no canonical form (duplicate keys, no name or not an object)", d))
}

// duplicateName finds two definitions of one kind under one name.
func duplicateName(c *contract.Contract) (ChangeRef, bool) {
	for _, k := range contract.Kinds {
		defs := c.Defs[k]
		for i := 1; i < len(defs); i++ {
			if defs[i].Name == defs[i-1].Name {
				return ChangeRef{Kind: string(k), Name: contract.SafeName(defs[i].Name), Labels: []string{"duplicate-name"}}, true
			}
		}
	}
	return ChangeRef{}, false
}

// shapeHandshake removes the instructions from a handshake result when
// the host does not let them reach the model.
func (s *Session) shapeHandshake(profile string, frame []byte, instr *string) []byte {
	if instr == nil || s.cfg.Hooks.Instructions == nil || s.cfg.Hooks.Instructions(profile, instr) {
		return frame
	}
	m, err := jsonrpc.Peek(frame)
	if err != nil || m.Result == nil {
		return frame
	}
	s.event(Event{Op: "withhold", Outcome: "withheld", Kind: contract.InstructionsKind, Code: "instructions"})
	return jsonrpc.NewResult(m.ID, replaceMember(m.Result, "instructions", nil))
}
