package gate

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/policy"
)

// This file holds the gate's only way of reading members of data another
// side controls: handshake results, listing pages, capabilities, _meta,
// call params, confirmation answers. Each lookup tells absent from
// unreadable. Unreadable — a repeated member name, a member whose name
// equals the one read up to case, a wrong type — is never read as absent:
// two parsers could read such bytes as two different messages, and the
// gate must not check one while the peer acts on the other.

// errUnreadable says that data the gate must read cannot be read
// unambiguously. Its text is fixed: it never quotes the data.
var errUnreadable = errors.New("not readable unambiguously")

// lookup returns the raw value of member key of the object obj. present is
// false when obj has no such member. err is set when obj is not an object,
// repeats a member name, or has another member whose name equals key up to
// case (Go's encoding/json and other case-insensitive decoders would bind
// it to the same field).
func lookup(obj []byte, key string) (value []byte, present bool, err error) {
	o, err := readObject(obj)
	if err != nil {
		return nil, false, err
	}
	return o.get(key)
}

// An object is the members of a JSON object, read once (with its repeated
// names refused) for several lookups.
type object []jsonrpc.Member

func readObject(raw []byte) (object, error) { return readObjectKnowing(raw, "", "") }

// readObjectKnowing is readObject told that member name's value is often
// known (jsonrpc.MembersKnowing).
func readObjectKnowing(raw []byte, name, known string) (object, error) {
	ms, err := jsonrpc.MembersKnowing(raw, name, known)
	if err != nil {
		return nil, errUnreadable
	}
	return ms, nil
}

// get is lookup on an object already read.
func (o object) get(key string) (value []byte, present bool, err error) {
	for _, m := range o {
		switch {
		case m.Key == key:
			value, present = m.Value, true
		case strings.EqualFold(m.Key, key):
			return nil, false, errUnreadable
		}
	}
	return value, present, nil
}

// getString is lookupString on an object already read.
func (o object) getString(key string, nullAbsent bool) (s string, present bool, err error) {
	raw, present, err := o.get(key)
	return stringValue(raw, present, err, nullAbsent)
}

// getObject is lookupObject on an object already read.
func (o object) getObject(key string) (raw []byte, present bool, err error) {
	raw, present, err = o.get(key)
	return objectValue(raw, present, err)
}

// lookupString returns member key of obj as a string; a member that is
// present but not a string is unreadable. With nullAbsent, null counts as
// absent (optional members that clients read as "none").
func lookupString(obj []byte, key string, nullAbsent bool) (s string, present bool, err error) {
	raw, present, err := lookup(obj, key)
	return stringValue(raw, present, err, nullAbsent)
}

func stringValue(raw []byte, present bool, err error, nullAbsent bool) (s string, ok bool, _ error) {
	if err != nil || !present {
		return "", false, err
	}
	if nullAbsent && string(raw) == "null" {
		return "", false, nil
	}
	s, err = jsonrpc.DecodeString(raw)
	if err != nil || !utf8.ValidString(s) {
		return "", false, errUnreadable
	}
	return s, true, nil
}

// lookupObject returns member key of obj, which must be an object when
// present.
func lookupObject(obj []byte, key string) (raw []byte, present bool, err error) {
	raw, present, err = lookup(obj, key)
	return objectValue(raw, present, err)
}

func objectValue(raw []byte, present bool, err error) ([]byte, bool, error) {
	if err != nil || !present {
		return nil, false, err
	}
	if raw[0] != '{' {
		return nil, false, errUnreadable
	}
	return raw, true, nil
}

// memberNames returns the member names of obj, refusing one that repeats
// a name or has two names equal up to case.
func memberNames(obj []byte) ([]string, error) {
	ms, err := jsonrpc.Members(obj)
	if err != nil {
		return nil, errUnreadable
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Key
	}
	if foldCollision(names) {
		return nil, errUnreadable
	}
	return names, nil
}

// checkServerResult refuses a result the gate reads (a handshake result,
// a listing page) unless it is an object in which no object at any depth
// repeats a member name and no two top-level names are equal up to case.
// The values of the members named in skip are left to their own check.
// The frame it came in was validated by jsonrpc.Peek (UTF-8, nesting).
func checkServerResult(result []byte, skip ...string) error {
	ms, err := jsonrpc.Members(result)
	if err != nil {
		return errUnreadable
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Key
		if slices.Contains(skip, m.Key) {
			continue
		}
		if err := jsonrpc.CheckUnique(m.Value); err != nil {
			return errUnreadable
		}
	}
	if foldCollision(names) {
		return errUnreadable
	}
	return nil
}

// foldCollision reports whether two names are equal under Unicode simple
// case folding (strings.EqualFold), the matching case-insensitive JSON
// decoders use.
func foldCollision(names []string) bool {
	const linear = 16 // why: objects the gate reads have a handful of members
	if len(names) <= linear {
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				if strings.EqualFold(names[i], names[j]) {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		k := policy.FoldKey(n)
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}
