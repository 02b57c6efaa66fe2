package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// explainsStrictness reports whether in, which encoding/json accepts, has a
// feature that this package rejects on purpose: invalid UTF-8, an escaped
// lone surrogate or nesting deeper than maxDepth.
func explainsStrictness(in []byte) bool {
	return !utf8.Valid(in) || hasLoneSurrogate(in) || nesting(in) > maxDepth
}

// hasLoneSurrogate reports whether valid JSON in has a \u escape of a
// surrogate that is not part of a pair. Outside strings valid JSON has no
// backslash, so it can scan escapes without tracking strings.
func hasLoneSurrogate(in []byte) bool {
	pendingHigh := false
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			if pendingHigh {
				return true
			}
			continue
		}
		if in[i+1] != 'u' {
			if pendingHigh {
				return true
			}
			i++
			continue
		}
		r, _ := hex4(in, i+2)
		i += 5
		switch {
		case 0xd800 <= r && r < 0xdc00:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case 0xdc00 <= r && r < 0xe000:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
	}
	return pendingHigh
}

// nesting returns the deepest nesting of valid JSON in.
func nesting(in []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// checkAccepted checks what every accepted input must satisfy beyond
// encoding/json's rules.
func checkAccepted(t *testing.T, in []byte) {
	t.Helper()
	if !json.Valid(in) {
		t.Fatal("accepted input that encoding/json rejects")
	}
	if explainsStrictness(in) {
		t.Fatal("accepted invalid UTF-8, a lone surrogate or too deep nesting")
	}
}

func checkParseError(t *testing.T, in []byte, err error) {
	t.Helper()
	valid := json.Valid(in)
	switch {
	case errors.Is(err, ErrSyntax):
		if valid && !explainsStrictness(in) {
			t.Fatalf("syntax error %v for JSON that encoding/json accepts", err)
		}
	case errors.Is(err, ErrInvalid):
		if !valid {
			t.Fatalf("ErrInvalid %v for input that is not JSON", err)
		}
	default:
		t.Fatalf("error %v wraps neither ErrSyntax nor ErrInvalid", err)
	}
}

func FuzzPeek(f *testing.F) {
	for _, v := range loadPeekVectors(f) {
		f.Add(v.frame(f))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, err := Peek(frame)
		if err != nil {
			checkParseError(t, frame, err)
			if m.Kind != Invalid || m.Method != "" || m.Params != nil || m.Result != nil || m.Error != nil {
				t.Fatalf("Message on error: %+v", m)
			}
			if m.ID != nil && (!aliases(frame, m.ID) || IDKey(m.ID) == "" || !errors.Is(err, ErrInvalid)) {
				t.Fatalf("ID on error: %q", m.ID)
			}
			return
		}
		checkAccepted(t, frame)
		for _, raw := range [][]byte{m.ID, m.Params, m.Result, m.Error} {
			if raw != nil && (!aliases(frame, raw) || !json.Valid(raw)) {
				t.Fatalf("raw span %q is not a valid subslice of the frame", raw)
			}
		}
		trimmed := bytes.TrimLeft(frame, " \t\r\n")
		if m.Kind == Batch {
			if trimmed[0] != '[' {
				t.Fatal("Batch that is not an array")
			}
			return
		}
		// Compare with encoding/json's reading of the same frame.
		var env map[string]json.RawMessage
		if err := json.Unmarshal(frame, &env); err != nil {
			t.Fatalf("encoding/json cannot read an accepted frame: %v", err)
		}
		ms, err := Members(frame)
		if err != nil || len(ms) != len(env) {
			t.Fatalf("Members: %d, %v; encoding/json sees %d members", len(ms), err, len(env))
		}
		var version string
		if json.Unmarshal(env["jsonrpc"], &version) != nil || version != "2.0" {
			t.Fatal(`accepted a frame whose jsonrpc is not "2.0"`)
		}
		for name, got := range map[string][]byte{"id": m.ID, "params": m.Params, "result": m.Result, "error": m.Error} {
			want, ok := env[name]
			if ok != (got != nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s = %q, encoding/json sees %q", name, got, want)
			}
		}
		for name := range env {
			for _, n := range envelopeNames {
				if name != n && strings.EqualFold(name, n) {
					t.Fatalf("accepted a member name that folds to %s", n)
				}
			}
		}
		rawMethod, hasMethod := env["method"]
		if hasMethod {
			var method string
			if err := json.Unmarshal(rawMethod, &method); err != nil || method != m.Method {
				t.Fatalf("Method = %q, encoding/json sees %q (%v)", m.Method, method, err)
			}
		}
		var want Kind
		switch {
		case hasMethod && m.ID != nil:
			want = Request
		case hasMethod:
			want = Notification
		default:
			want = Response
		}
		if m.Kind != want {
			t.Fatalf("Kind = %v, want %v", m.Kind, want)
		}
		if m.ID != nil && IDKey(m.ID) == "" {
			t.Fatalf("IDKey of an accepted id %q is empty", m.ID)
		}
	})
}

// FuzzIDKey: AppendIDKey appends exactly IDKey's key, for any input.
func FuzzIDKey(f *testing.F) {
	for _, id := range []string{`1`, `-1.5e3`, `"a"`, `"a\"b"`, `"\u00e9"`, `null`, ` 7 `, `"x`, `nul`, `1 2`, `{}`, ``} {
		f.Add([]byte(id))
	}
	f.Fuzz(func(t *testing.T, id []byte) {
		prefix := []byte("pre")
		got := AppendIDKey(prefix, id)
		if want := "pre" + IDKey(id); string(got) != want {
			t.Fatalf("AppendIDKey(%q) = %q, IDKey gives %q", id, got, want)
		}
	})
}

func FuzzMembers(f *testing.F) {
	vv := loadValueVectors(f)
	for _, set := range [][]valueVector{vv.Members, vv.Elements, vv.Strings} {
		for _, v := range set {
			f.Add([]byte(v.Input))
		}
	}
	for _, v := range loadPeekVectors(f) {
		f.Add(v.frame(f))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ms, err := Members(in)
		if err != nil {
			checkParseError(t, in, err)
		} else {
			checkAccepted(t, in)
			var want map[string]json.RawMessage
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatalf("Members accepted input encoding/json cannot read: %v", err)
			}
			if len(ms) != len(want) {
				t.Fatalf("%d members, encoding/json sees %d", len(ms), len(want))
			}
			for _, m := range ms {
				if !aliases(in, m.Value) || !bytes.Equal(m.Value, want[m.Key]) {
					t.Fatalf("member %q = %q, encoding/json sees %q", m.Key, m.Value, want[m.Key])
				}
			}
		}

		// Lookup agrees with Members: the same error or none, and each
		// named member's value (nil when absent).
		names := []string{"id", "name", "_meta", "a\"b"}
		values := make([][]byte, len(names))
		lerr := Lookup(in, names, values)
		if (lerr == nil) != (err == nil) || lerr != nil && lerr.Error() != err.Error() {
			t.Fatalf("Lookup: %v, Members: %v", lerr, err)
		}
		for i, n := range names {
			var want []byte
			for _, m := range ms {
				if m.Key == n {
					want = m.Value
				}
			}
			if !bytes.Equal(values[i], want) || (values[i] == nil) != (want == nil) {
				t.Fatalf("Lookup %s = %q, Members %q", n, values[i], want)
			}
		}

		// LookupStrict is Lookup, but fails with ErrCaseVariant when a
		// member (on input Members accepts) equals a name only up to case.
		strictNames := []string{"task", "resultType"}
		strict := make([][]byte, len(strictNames))
		serr := LookupStrict(in, strictNames, strict)
		variant := false
		for _, m := range ms {
			for _, n := range strictNames {
				variant = variant || m.Key != n && strings.EqualFold(m.Key, n)
			}
		}
		switch {
		case err != nil:
			if serr == nil || serr.Error() != err.Error() && !errors.Is(serr, ErrCaseVariant) {
				t.Fatalf("LookupStrict: %v, Members: %v", serr, err)
			}
		case variant != errors.Is(serr, ErrCaseVariant) || !variant && serr != nil:
			t.Fatalf("LookupStrict: %v, a case variant among the members: %v", serr, variant)
		}

		els, err := Elements(in)
		if err != nil {
			checkParseError(t, in, err)
		} else {
			checkAccepted(t, in)
			var want []json.RawMessage
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatalf("Elements accepted input encoding/json cannot read: %v", err)
			}
			if len(els) != len(want) {
				t.Fatalf("%d elements, encoding/json sees %d", len(els), len(want))
			}
			for i, e := range els {
				if !aliases(in, e) || !bytes.Equal(e, want[i]) {
					t.Fatalf("element %d = %q, encoding/json sees %q", i, e, want[i])
				}
			}
		}

		if err := CheckUnique(in); err != nil {
			checkParseError(t, in, err)
			if errors.Is(err, ErrInvalid) && !repeatsName(in) {
				t.Fatalf("CheckUnique refused a value with no repeated name: %v", err)
			}
		} else {
			checkAccepted(t, in)
			if repeatsName(in) {
				t.Fatal("CheckUnique accepted a value that repeats a member name")
			}
		}

		s, err := DecodeString(in)
		if err != nil {
			checkParseError(t, in, err)
		} else {
			checkAccepted(t, in)
			var want string
			if err := json.Unmarshal(in, &want); err != nil || s != want {
				t.Fatalf("DecodeString = %q, encoding/json sees %q (%v)", s, want, err)
			}
			if !utf8.ValidString(s) {
				t.Fatal("DecodeString returned invalid UTF-8")
			}
		}
	})
}

// splitModel is what Reader must return for input: the lines, each without
// "\n" and one "\r" before it, blank ones dropped, nil for those longer than
// max.
func splitModel(input []byte, max int) []*string {
	var out []*string
	lines := bytes.Split(input, []byte("\n"))
	for i, l := range lines {
		if i == len(lines)-1 {
			if len(l) == 0 {
				break
			}
		} else {
			l = bytes.TrimSuffix(l, []byte("\r"))
		}
		switch {
		case len(l) > max:
			out = append(out, nil)
		case len(bytes.Trim(l, " \t\r")) == 0:
		default:
			s := string(l)
			out = append(out, &s)
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	for _, v := range loadReaderVectors(f) {
		f.Add([]byte(v.Input), uint16(v.MaxFrame), uint8(0))
		f.Add([]byte(v.Input), uint16(3), uint8(7))
	}
	bufSizes := []int{16, 17, 33, readBufSize}
	chunkNames := []string{"whole", "one-byte", "half", "data-err"}
	f.Fuzz(func(t *testing.T, input []byte, max uint16, mode uint8) {
		maxFrame := int(max)
		if maxFrame == 0 {
			maxFrame = DefaultMaxFrame
		}
		bufSize := bufSizes[mode%4]
		chunk := chunkings[chunkNames[(mode/4)%4]]
		r := newReaderSize(chunk(bytes.NewReader(input)), maxFrame, bufSize)
		var got []*string
		for {
			frame, err := r.Next()
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrFrameTooLarge) {
				got = append(got, nil)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(frame) > maxFrame || bytes.IndexByte(frame, '\n') >= 0 || !bytes.Contains(input, frame) {
				t.Fatalf("frame %q breaks the rules", frame)
			}
			s := string(frame)
			got = append(got, &s)
		}
		if want := splitModel(input, maxFrame); show(got) != show(want) {
			t.Fatalf("got %s, want %s", show(got), show(want))
		}
	})
}

// repeatsName is the model for CheckUnique: whether an object anywhere in
// the valid JSON value in repeats a member name, found with encoding/json's
// token stream.
func repeatsName(in []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(in))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			dup := false
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return dup
				}
				name, _ := k.(string)
				if seen[name] {
					dup = true
				}
				seen[name] = true
				if walk() {
					dup = true
				}
			}
			dec.Token()
			return dup
		case json.Delim('['):
			dup := false
			for dec.More() {
				if walk() {
					dup = true
				}
			}
			dec.Token()
			return dup
		}
		return false
	}
	return walk()
}
