package gate

import (
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

// gateName is what a look-alike names, after foldForLookAlike.
const gateName = "mcpseal"

// namesTheGate reports whether the JSON value v (an elicitation's params)
// mentions mcpseal anywhere in its strings or member names, as a person
// would read them: case, width, the Latin look-alikes of other scripts,
// escapes, and every character that is not a letter (spaces, punctuation,
// invisible and combining marks) do not count. A value the gate cannot
// read one way only (invalid JSON, a repeated member) counts as naming it:
// a client may read the other copy.
func namesTheGate(v []byte) bool {
	c, err := canon.Transform(v)
	if err != nil {
		return true
	}
	var folded []byte
	for i := 0; i < len(c); {
		if c[i] == '\\' {
			// canon writes only the short escapes and \u00XX for control
			// characters: none is a letter.
			if i+1 < len(c) && c[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		}
		r, n := utf8.DecodeRune(c[i:])
		i += n
		if l := foldForLookAlike(r); l != 0 {
			folded = append(folded, l)
		}
	}
	return strings.Contains(string(folded), gateName)
}

// foldForLookAlike maps r to the ASCII lower-case letter it reads as, or
// 0 when it is no letter a person would read in "mcpseal".
func foldForLookAlike(r rune) byte {
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r)
	case r >= 'A' && r <= 'Z':
		return byte(r - 'A' + 'a')
	case r >= 0xFF21 && r <= 0xFF3A: // fullwidth A-Z
		return byte(r - 0xFF21 + 'a')
	case r >= 0xFF41 && r <= 0xFF5A: // fullwidth a-z
		return byte(r - 0xFF41 + 'a')
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		i := (r - 0x1D400) % 52
		if i >= 26 {
			i -= 26
		}
		return byte('a' + i)
	case r >= 0x24B6 && r <= 0x24CF: // circled A-Z
		return byte(r - 0x24B6 + 'a')
	case r >= 0x24D0 && r <= 0x24E9: // circled a-z
		return byte(r - 0x24D0 + 'a')
	}
	if l, ok := lookAlikes[unicode.ToLower(r)]; ok {
		return l
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return '?' // a letter of another script, a digit: it breaks the word
	}
	return 0
}

// lookAlikes are letters of other scripts that read as the Latin letters
// of "mcpseal" (Unicode's confusables for them, lower case).
var lookAlikes = map[rune]byte{
	'м': 'm', 'ṁ': 'm', 'ṃ': 'm', 'ɱ': 'm',
	'с': 'c', 'ϲ': 'c', 'ς': 'c', 'ç': 'c', 'ć': 'c', 'ċ': 'c', 'č': 'c', 'ᴄ': 'c',
	'р': 'p', 'ρ': 'p', 'ṗ': 'p', 'ᴘ': 'p',
	'ѕ': 's', 'ś': 's', 'ş': 's', 'š': 's', 'ș': 's', 'ꜱ': 's',
	'е': 'e', 'ё': 'e', 'є': 'e', 'ε': 'e', 'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e', 'ė': 'e', 'ę': 'e', 'ᴇ': 'e',
	'а': 'a', 'α': 'a', 'á': 'a', 'à': 'a', 'â': 'a', 'ä': 'a', 'å': 'a', 'ą': 'a', 'ᴀ': 'a',
	'ӏ': 'l', 'ı': 'l', 'ι': 'l', 'і': 'l', 'ł': 'l', 'ĺ': 'l', 'ʟ': 'l', 'ǀ': 'l', 'ⅼ': 'l',
	'ɑ': 'a', 'ⅿ': 'm', 'ⅽ': 'c',
	'0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's',
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
		if method == methodElicit && namesTheGate(v[1]) {
			return ReasonLookAlike
		}
	}
	return ""
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

// checkInputRequests delivers the answer to a prompts/get or
// resources/read of a 2026-07-28 session, the other requests a server may
// answer with input_required, unless its input requests could pass for
// the gate's own.
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

// mayAskForInput reports whether a 2026-07-28 server may answer method
// with input_required (besides tools/call).
func mayAskForInput(method string) bool {
	return method == "prompts/get" || method == "resources/read"
}
