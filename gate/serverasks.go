package gate

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// This file is what the gate checks in a server's requests for the
// person's input (threat model, known gaps 4 and 26). The gate's own
// confirmation is an elicitation/create whose message starts "mcpseal:";
// the client shows a server's elicitation through the same connection, so
// only the text tells them apart. A server's form that names mcpseal is
// therefore not shown: a person may take it for the gate's question and
// answer it as one.

// methodSampling is the server request that puts server text into the
// client's model.
const methodSampling = "sampling/createMessage"

// gateName is what a look-alike names, once folded (namesTheGate).
const gateName = "mcpseal"

// namesTheGate reports whether the JSON value v (an elicitation's params)
// mentions mcpseal anywhere in its strings or member names, as a person
// would read them: case, width, decomposition and marks, the letters of
// other scripts and the symbols that read as Latin ones (Unicode's
// confusables, lookAlikeTable), I, | and 1 for l, rn for m, escapes, HTML
// character references and percent-encoding (decoded up to three times),
// right-to-left overrides and isolates (their runs read reversed, and the
// whole text too), and every character that is not a letter (spaces,
// punctuation, invisible and combining marks) do not count. A value the
// gate cannot read one way only (invalid JSON, a repeated member) counts as
// naming it: a client may read the other copy.
func namesTheGate(v []byte) bool {
	c, err := canon.Transform(v)
	if err != nil {
		return true
	}
	text := make([]byte, 0, len(c))
	for i := 0; i < len(c); {
		if c[i] != '\\' {
			text = append(text, c[i])
			i++
			continue
		}
		// canon writes only the short escapes and \u00XX for control
		// characters: none is a letter.
		if i+1 < len(c) && c[i+1] == 'u' {
			i += 6
		} else {
			i += 2
		}
	}
	for range 3 {
		decoded, changed := decodeReferences(text)
		if !changed {
			break
		}
		text = decoded
	}
	// As shown with the direction overrides applied, and, fail-safe, with
	// every direction control dropped, forwards and reversed.
	if spellsTheGate(foldText(text, true)) {
		return true
	}
	folded := foldText(text, false)
	if spellsTheGate(folded) {
		return true
	}
	slices.Reverse(folded)
	return spellsTheGate(folded)
}

// maxBidiDepth is the Unicode bidirectional algorithm's limit of nested
// embeddings, overrides and isolates; deeper controls do nothing.
const maxBidiDepth = 125

// foldText folds UTF-8 text letter by letter (foldASCII, appendFolded).
// With overrides, what a right-to-left override (RLO) shows reversed is
// reversed, and what a left-to-right override inside it shows forwards
// is put back: Latin letters are strongly left-to-right, so embeddings
// and isolates do not reorder them. Without, direction controls are
// dropped.
func foldText(text []byte, overrides bool) []byte {
	folded := make([]byte, 0, len(text))
	type run struct {
		start int
		rtl   bool
	}
	runs := []run{{0, false}}
	open := func(rtl, override bool) {
		if len(runs) > maxBidiDepth {
			return
		}
		if !override {
			rtl = runs[len(runs)-1].rtl
		}
		runs = append(runs, run{len(folded), rtl})
	}
	closeRun := func() {
		if len(runs) == 1 {
			return
		}
		r := runs[len(runs)-1]
		runs = runs[:len(runs)-1]
		if r.rtl != runs[len(runs)-1].rtl {
			slices.Reverse(folded[r.start:])
		}
	}
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			if l := foldASCII(text[i]); l != 0 {
				folded = append(folded, l)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		i += n
		switch {
		case !isBidiControl(r):
			folded = appendFolded(folded, r)
		case !overrides:
		case r == 0x202E: // RLO
			open(true, true)
		case r == 0x202D: // LRO
			open(false, true)
		case r == 0x202A, r == 0x202B, r == 0x2066, r == 0x2067, r == 0x2068: // LRE, RLE, LRI, RLI, FSI
			open(false, false)
		default: // PDF, PDI
			closeRun()
		}
	}
	for len(runs) > 1 {
		closeRun()
	}
	return folded
}

// isBidiControl reports whether r is an explicit direction embedding,
// override or isolate, or its end.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// spellsTheGate reports whether folded letters spell the gate's name,
// reading rn as m.
func spellsTheGate(folded []byte) bool {
	return bytes.Contains(folded, []byte(gateName)) ||
		bytes.Contains(folded, []byte("rn")) && bytes.Contains(bytes.ReplaceAll(folded, []byte("rn"), []byte("m")), []byte(gateName))
}

// decodeReferences decodes, once, the HTML character references (&#109;
// &#x6d; with or without the semicolon, any number of digits; &amp;; the
// letters &mopf; &mscr; &mfr;) and the percent-encoded bytes (%6D, and
// UTF-8 as %D1%81) in text, as a client may render or resolve them.
func decodeReferences(text []byte) ([]byte, bool) {
	if !bytes.ContainsAny(text, "&%") {
		return text, false
	}
	out := make([]byte, 0, len(text))
	changed := false
	for i := 0; i < len(text); {
		switch text[i] {
		case '%':
			if i+2 < len(text) && isHex(text[i+1]) && isHex(text[i+2]) {
				out = append(out, unhex(text[i+1])<<4|unhex(text[i+2]))
				i += 3
				changed = true
				continue
			}
		case '&':
			if r, n := characterReference(text[i:]); n > 0 {
				out = utf8.AppendRune(out, r)
				i += n
				changed = true
				continue
			}
		}
		out = append(out, text[i])
		i++
	}
	return out, changed
}

// characterReference decodes the HTML character reference at the start
// of b (which starts with '&'); n is 0 when there is none.
func characterReference(b []byte) (r rune, n int) {
	if len(b) > 2 && b[1] == '#' {
		i, base := 2, rune(10)
		if b[2] == 'x' || b[2] == 'X' {
			i, base = 3, 16
		}
		start := i
		for ; i < len(b) && (base == 16 && isHex(b[i]) || b[i] >= '0' && b[i] <= '9'); i++ {
			if r = r*base + rune(unhex(b[i])); r > unicode.MaxRune {
				r = utf8.RuneError // too large: no character, but still a reference
			}
		}
		if i == start {
			return 0, 0
		}
		if i < len(b) && b[i] == ';' {
			i++
		}
		return r, i
	}
	end := bytes.IndexByte(b[:min(len(b), 9)], ';') // a name of at most 7 letters: no scan of the rest
	if end < 2 {
		return 0, 0
	}
	name := string(b[1:end])
	switch {
	case name == "amp":
		return '&', end + 1
	case len(name) >= 3 && (strings.HasSuffix(name, "opf") || strings.HasSuffix(name, "scr")) && len(name) == 4,
		len(name) == 3 && strings.HasSuffix(name, "fr"):
		if l := name[0]; l|0x20 >= 'a' && l|0x20 <= 'z' {
			return rune(l), end + 1
		}
	}
	return 0, 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// foldASCII is the letter a person reads the ASCII character c as, '?'
// for a digit that reads as none (it breaks a word), 0 for a character
// that does not count (internal/lookalikegen.ReadsAs is the same).
func foldASCII(c byte) byte {
	switch {
	case c == 'I', c == '|', c == '1':
		return 'l'
	case c >= 'A' && c <= 'Z':
		return c - 'A' + 'a'
	case c >= 'a' && c <= 'z':
		return c
	case c == '0':
		return 'o'
	case c == '3':
		return 'e'
	case c == '4':
		return 'a'
	case c == '5':
		return 's'
	case c >= '0' && c <= '9':
		return '?'
	}
	return 0
}

// appendFolded appends the letters a person reads the code point r
// (above ASCII) as: its entry in lookAlikeTable; nothing for a mark or
// any other character that is no letter or digit; '?' for a letter or
// digit that reads as no Latin one.
func appendFolded(folded []byte, r rune) []byte {
	i, found := sort.Find(len(lookAlikeTable), func(i int) int { return int(r - lookAlikeTable[i].r) })
	switch {
	case found:
		return append(folded, lookAlikeTable[i].s...)
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		// Letters that show as nothing (the Hangul fillers).
		return folded
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return append(folded, '?')
	}
	return folded
}

// serverRequestRefusal is the reason the gate does not forward the
// server request m to the client, "" when it forwards it.
func (s *Session) serverRequestRefusal(m jsonrpc.Message) string {
	if !s.legacy {
		return ReasonServerRequest
	}
	if m.Method == methodElicit && namesTheGate(m.Params) {
		return ReasonLookAlike
	}
	return ""
}

// refuseServerRequest answers the server's request m with the gate's
// refusal for reason, and reports it.
func (s *Session) refuseServerRequest(m jsonrpc.Message, reason string) {
	method := contract.SafeName(m.Method)
	msg := "mcpseal: server requests are not part of protocol 2026-07-28; not forwarded"
	if reason == ReasonLookAlike {
		msg = "mcpseal: a request for the person's input that names mcpseal could pass for its own confirmation; not forwarded"
	}
	s.log.Warn("server request refused", "server", s.cfg.Identity.ID, "method", method, "reason", reason)
	s.event(Event{Op: "withhold", Outcome: "withheld", Code: reason}) // no Kind: a server request
	s.toServer(jsonrpc.NewError(m.ID, CodeRefused, msg, marshalData(s.errorData(reason))))
}

// inputRequestsLookAlike is ReasonLookAlike when a 2026-07-28
// input_required answer's inputRequests and requestState (raw, nil when
// absent) ask for the person's input as the gate would, ReasonUnreadable
// when they cannot be read one way only, else "". Each request's key must
// not name mcpseal, nor an elicitation's params; the state must not be in
// the gate's space (mrtr.go): the client's retry would be taken for the
// answer to the gate's own question.
func inputRequestsLookAlike(inputRequests, requestState []byte) string {
	if requestState != nil {
		st, err := jsonrpc.DecodeString(requestState)
		if err != nil {
			return ReasonUnreadable
		}
		if strings.HasPrefix(strings.ToLower(st), gateIDSpace) {
			return ReasonLookAlike
		}
	}
	if inputRequests == nil {
		return ""
	}
	reqs, err := jsonrpc.Members(inputRequests)
	if err != nil {
		return ReasonUnreadable
	}
	var v [2][]byte
	for _, r := range reqs {
		if namesTheGate(jsonrpc.AppendString(nil, r.Key)) {
			return ReasonLookAlike
		}
		if err := jsonrpc.LookupStrict(r.Value, inputRequestMembers, v[:]); err != nil {
			return ReasonUnreadable
		}
		method, err := jsonrpc.DecodeString(v[0])
		if v[0] != nil && err != nil {
			return ReasonUnreadable
		}
		// Whatever a client may show the person: every request but
		// sampling's (its text goes to the client's model, gap 4),
		// method and all, however the method is spelled.
		if !strings.EqualFold(method, methodSampling) && namesTheGate(r.Value) {
			return ReasonLookAlike
		}
	}
	return ""
}

// errorLookAlike is ReasonLookAlike when the error object e asks for the
// person's input (code -32042, URL elicitation required, or data with
// elicitations: clients show their messages and links to the person) in
// a way that names mcpseal, ReasonUnreadable when it cannot be read one
// way only, else "".
func errorLookAlike(e []byte) string {
	var v [2][]byte
	if err := jsonrpc.LookupStrict(e, errorMembers, v[:]); err != nil {
		return ReasonUnreadable
	}
	asks := string(v[0]) == codeURLElicitationRequired
	if !asks && v[1] != nil && v[1][0] == '{' {
		var el [1][]byte
		if err := jsonrpc.LookupStrict(v[1], elicitationsMember, el[:]); err != nil {
			return ReasonUnreadable
		}
		asks = el[0] != nil
	}
	if asks && namesTheGate(e) {
		return ReasonLookAlike
	}
	return ""
}

// codeURLElicitationRequired is the error code of a request that needs
// the person to open a URL first (2025-11-25).
const codeURLElicitationRequired = "-32042"

var (
	errorMembers       = []string{"code", "data"}
	elicitationsMember = []string{"elicitations"}
)

// withholdError answers the client's request p with the gate's refusal
// for reason in place of the server's error answer.
func (s *Session) withholdError(p *pendingRequest, m jsonrpc.Message, reason string) {
	s.log.Warn("error answer withheld", "server", s.cfg.Identity.ID, "reason", reason)
	tool := ""
	if p.call != nil {
		tool = contract.SafeName(p.call.Tool.Name)
	}
	s.event(Event{Op: "result", Outcome: "withheld", Code: reason, Size: len(m.Error), Request: p.key})
	s.withholdAnswer(p, reason, tool)
}

// inputRequestMembers are the members inputRequestsLookAlike reads of each
// input request.
var inputRequestMembers = []string{"method", "params"}

// withholdAnswer answers the client's request p with the gate's refusal
// for reason in place of the server's answer; tool is the call's tool
// (reduced), "" for another request.
func (s *Session) withholdAnswer(p *pendingRequest, reason, tool string) {
	var msg string
	switch reason {
	case ReasonUnreadable:
		msg = "mcpseal: the answer is not readable unambiguously (a repeated or case-variant member); withheld"
	case ReasonLookAlike:
		msg = "mcpseal: the answer asks for the person's input in a way that could pass for mcpseal's own confirmation; withheld"
	default:
		msg = "mcpseal: the server answered the call with a task instead of its result; tools run as tasks are not supported; withheld"
	}
	d := s.errorData(reason)
	d.Tool = tool
	s.toClient(jsonrpc.NewError(p.id, CodeRefused, msg, marshalData(d)))
}

// checkInputRequests delivers the answer to a request other than a
// tools/call, a listing or a handshake (prompts/get and resources/read
// may be answered input_required in 2026-07-28) unless input requests in
// it could pass for the gate's own.
func (s *Session) checkInputRequests(p *pendingRequest, m jsonrpc.Message, frame []byte) {
	var v [2][]byte
	reason := ReasonUnreadable
	if jsonrpc.LookupStrict(m.Result, inputRequestsMember, v[:]) == nil {
		reason = inputRequestsLookAlike(v[0], v[1])
	}
	if reason == "" {
		s.toClientAs(frame, m, p.key)
		return
	}
	s.log.Warn("answer withheld", "server", s.cfg.Identity.ID, "method", p.method, "reason", reason)
	s.event(Event{Op: "result", Outcome: "withheld", Code: reason, Size: len(m.Result), Request: p.key})
	s.withholdAnswer(p, reason, "")
}

// inputRequestsMember are the members checkInputRequests reads.
var inputRequestsMember = []string{"inputRequests", "requestState"}
