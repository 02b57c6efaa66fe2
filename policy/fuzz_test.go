package policy

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/canon"
)

// FuzzParsePolicy: the policy file reader never panics, and a file it
// accepts parses the same way twice (the decoder has no hidden state).
func FuzzParsePolicy(f *testing.F) {
	f.Add(documentedExample(f))
	for _, v := range loadInvalidVectors(f) {
		f.Add([]byte(v.Policy))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("p", data)
		if err != nil {
			var fe *FileError
			if !asFileError(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error is not UTF-8: %q", err)
			}
			return
		}
		q, err := Parse("p", data)
		if err != nil || len(q.servers) != len(p.servers) || len(q.providers) != len(p.providers) {
			t.Fatal("a second parse disagrees")
		}
	})
}

func asFileError(err error, fe **FileError) bool {
	e, ok := err.(*FileError)
	*fe = e
	return ok
}

// FuzzParseReceipt: the receipt parser never panics; what it accepts is
// signed by the pinned key over the canonical receipt it reports.
func FuzzParseReceipt(f *testing.F) {
	v := loadReceiptVectors(f)
	keys := map[string]ed25519.PublicKey{}
	for kid, s := range v.Keys {
		k, err := parsePublicKey(s)
		if err != nil {
			f.Fatal(err)
		}
		keys[kid] = k
	}
	for _, vec := range v.Vectors {
		f.Add([]byte(vec.Envelope))
	}
	now, _ := time.Parse(time.RFC3339, v.Now)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ref, err := ParseReceipt(data, keys)
		if err != nil {
			if _, ok := err.(*ReceiptError); !ok {
				t.Fatalf("error %T", err)
			}
			return
		}
		if !r.Decision.valid() || ref.Decision != r.Decision || keys[r.KID] == nil || len(ref.SHA256) != 64 {
			t.Fatalf("accepted %+v", r)
		}
		r.Check(v.Stage, v.Subject, v.Nonce, now)
	})
}

// FuzzCommandAnswer: the command provider's output parser never panics
// and accepts only a valid decision with a code-shaped reason.
func FuzzCommandAnswer(f *testing.F) {
	for _, s := range []string{`{"v":1,"decision":"allow","ttl_seconds":60}`, `{"v":1,"decision":"block","reason":"x"}`,
		`allow`, `{"v":1,"decision":"allow","message":"hi"}`, `{"v":1,"Decision":"block","decision":"allow"}`, ``} {
		f.Add([]byte(s))
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseCommandAnswer(data, now)
		if err != nil {
			return
		}
		if !a.decision.valid() || a.reason != "" && !isCode(a.reason) || a.expires.After(now.Add(maxCommandTTL*time.Second)) {
			t.Fatalf("accepted %+v from %q", a, data)
		}
	})
}

// FuzzCheckArguments: argument validation never panics, and a refusal
// carries only safe text.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"city":"Paris"}`, `{"city":5}`, `{"path":"a","PATH":"b"}`, `{"a":{"b":[1,2,{"c":null}]}}`, `[]`, `{"city":"\ud800"}`} {
		f.Add([]byte(s))
	}
	def := contractTool(f, `{"name":"t","inputSchema":{"type":"object","properties":{"city":{"type":"string","pattern":"^[A-Z]"},"n":{"type":"integer"}},"required":["city"],"additionalProperties":{"type":"object","properties":{"b":{"type":"array","items":{"type":"integer"}}}}}}`)
	s := NewSchemas(0)
	f.Fuzz(func(t *testing.T, args []byte) {
		params := append(append([]byte(`{"name":"t","arguments":`), args...), '}')
		r := s.CheckArguments(def, params)
		if r == nil {
			if !json.Valid(params) {
				t.Fatal("invalid JSON accepted")
			}
			return
		}
		if strings.ContainsAny(r.Pointer+r.Keyword+r.Tool, " \"'<>\n") || len(r.Pointer) > maxPointerTokens*(maxPointerTokenLen+1)+4 {
			t.Fatalf("unsafe refusal %+v", r)
		}
	})
}

// FuzzCheckStructured: a result the outputSchema check lets through is
// valid JSON, and (decoded by encoding/json) either says isError, or is an
// input_required answer with no content of its own, or has a
// structuredContent the schema's one rule holds for.
func FuzzCheckStructured(f *testing.F) {
	for _, s := range []string{`{"structuredContent":{"n":1}}`, `{"structuredContent":{"n":"x"}}`, `{"isError":true}`,
		`{"resultType":"input_required","inputRequests":{}}`, `{"resultType":"input_required","content":[]}`, `{"resultType":"input_required","ResultType":"x"}`, `[]`} {
		f.Add([]byte(s))
	}
	def := contractTool(f, `{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}`)
	s := NewSchemas(0)
	f.Fuzz(func(t *testing.T, result []byte) {
		if s.CheckStructured(def, result) != nil {
			return
		}
		var r struct {
			StructuredContent *struct {
				N *json.Number `json:"n"`
			} `json:"structuredContent"`
			IsError    bool             `json:"isError"`
			ResultType string           `json:"resultType"`
			Content    *json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(result, &r); err != nil {
			t.Fatalf("passed, but encoding/json cannot read it: %v", err)
		}
		switch {
		case r.IsError:
		case r.ResultType == "input_required" && r.Content == nil && r.StructuredContent == nil:
		case r.StructuredContent != nil && r.StructuredContent.N != nil:
			if _, err := r.StructuredContent.N.Int64(); err != nil && !strings.ContainsAny(r.StructuredContent.N.String(), ".eE") {
				t.Fatalf("passed with n = %s", r.StructuredContent.N)
			}
		default:
			t.Fatalf("passed without isError, an empty input_required or a structuredContent with n: %s", result)
		}
	})
}

// FuzzConfirmationAnswer: nothing but an explicit accept with confirm
// true is a yes.
func FuzzConfirmationAnswer(f *testing.F) {
	for _, s := range []string{`{"action":"accept","content":{"confirm":true}}`, `{"action":"decline"}`, `{"action":"accept","content":{"confirm":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if ConfirmationAnswer(data) != "" {
			return
		}
		var m struct {
			Action  string `json:"action"`
			Content map[string]json.RawMessage
		}
		if err := json.Unmarshal(data, &m); err != nil || m.Action != "accept" || !bytes.Equal(bytes.TrimSpace(m.Content["confirm"]), []byte("true")) {
			t.Fatalf("%q counted as a yes", data)
		}
	})
}

// FuzzCanonicalMember: the scanning member finder agrees with a decoder
// on canonical objects.
func FuzzCanonicalMember(f *testing.F) {
	f.Add([]byte(`{"a":1,"annotations":{"x":[1,"}"]},"z":"\"annotations\""}`), "annotations")
	// Keys that sort before the name as characters but not as bytes, or
	// the other way round: escapes, and UTF-8 against UTF-16 order.
	f.Add([]byte(`{"a\"z":1,"a\u0001":2,"annotations":3,"b":4}`), "annotations")
	f.Add([]byte(`{"\ud800\udc00":1,"\uffff":2}`), "\uffff")
	f.Add([]byte(`{"\ud800\udc00":1,"\uffff":2}`), "\ufffe")
	f.Add([]byte(`{"A":1,"[":2,"\\":3,"]":4,"annotations":5,"\u00e9":6}`), "]")
	f.Add([]byte(`{"description":"d","name":"n"}`), "annotations")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		if strings.ContainsFunc(name, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
			return // canonical JSON escapes these in a key
		}
		def, err := contractDefinition(data)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(def, &m) != nil {
			return
		}
		if got, want := canonicalMember(def, name), m[name]; !bytes.Equal(got, want) {
			t.Fatalf("canonicalMember(%s, %q) = %s, want %s", def, name, got, want)
		}
	})
}

// decodedRiskyAnnotations is confirm_destructive's reading of annotations
// as it was before riskyAnnotations scanned instead of decoding: the
// reference the scanner is held to.
func decodedRiskyAnnotations(raw []byte) bool {
	var m map[string]json.RawMessage
	if raw != nil && json.Unmarshal(raw, &m) != nil {
		m = nil
	}
	hint := func(name string, def bool) bool {
		switch string(m[name]) {
		case "true":
			return true
		case "false":
			return false
		}
		return def
	}
	readOnly, destructive, openWorld := hint("readOnlyHint", false), hint("destructiveHint", true), hint("openWorldHint", true)
	return string(m["destructiveHint"]) == "true" || !readOnly && (destructive || openWorld)
}

// FuzzRiskyAnnotations: on the canonical annotations of a definition the
// scanning reader decides as the decoder did (member names with canonical
// escapes included); on any other bytes it is never less cautious than
// the decoder.
func FuzzRiskyAnnotations(f *testing.F) {
	for _, s := range []string{
		`{"readOnlyHint":true,"openWorldHint":false}`,
		`{"destructiveHint":false,"openWorldHint":false,"title":"x,}"}`,
		`{"readOnlyHint":true,"destructiveHint":true}`,
		`{"readOnlyHint":"true","openWorldHint":false}`,
		`{"readOnlyHint":true,"readOnlyHint":false,"openWorldHint":false}`,
		`{ "readOnlyHint" : true , "openWorldHint" : false }`,
		`{"a":{"b":[1,{"c":"}"}]},"readOnlyHint":true,"openWorldHint":false}`,
		`{"readOnlyHint":true,"x\n":1,"openWorldHint":false}`,
		`{"\"":1,"\\":2,"\u001f":3,"readOnlyHint":true}`,
		`{"\u0072eadOnlyHint":true}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := riskyAnnotations(data), decodedRiskyAnnotations(data)
		if want && !got {
			t.Fatalf("riskyAnnotations(%q) = false where the decoder asks for confirmation", data)
		}
		c, err := canon.Transform(data)
		if err != nil {
			return
		}
		if got, want := riskyAnnotations(c), decodedRiskyAnnotations(c); got != want {
			t.Fatalf("riskyAnnotations(%s) = %v, the decoder %v", c, got, want)
		}
	})
}
