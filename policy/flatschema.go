package policy

import (
	"bytes"
	"errors"
	"sync/atomic"
)

// This file is a shortcut for the commonest inputSchema: an object whose
// named members have a JSON type each, some of them required, and
// perhaps no others allowed — what an echo, a search or a read_file tool
// declares. For such a schema a call's arguments can be judged on the raw
// params, in the same strict pass that proves them I-JSON, without
// building Go values for the validator.
//
// The shortcut only ever says "valid". Whenever it cannot say so — a
// keyword it does not know, a member of the wrong type, a missing one,
// anything the strict pass refuses — CheckArguments runs the full path
// (decodeArguments and the compiled schema), which decides, and words the
// refusal. So the one claim to hold is: when valid returns true, the full
// path accepts the same params. FuzzFlatSchemaAgrees holds it.

// flatSchema is an inputSchema that the shortcut can judge.
type flatSchema struct {
	members  map[string]flatMember
	required uint64 // a bit per required name
	closed   bool   // "additionalProperties": false
	// meta is a copy of the last params._meta value the strict pass
	// proved I-JSON with no names equal up to case (see skipMeta).
	meta atomic.Pointer[[]byte]
}

// maxMetaMemo bounds the _meta value the shortcut remembers.
const maxMetaMemo = 2 << 10

type flatMember struct {
	types    flatTypes // what the value may be; 0: anything
	declared bool      // named in "properties"; otherwise only required
	req      uint64    // its bit in required; 0 when not required
}

// flatTypes is a set of JSON Schema type names.
type flatTypes uint8

const (
	flatString flatTypes = 1 << iota
	flatNumber
	flatInteger
	flatBoolean
	flatNull
	flatObject
	flatArray
)

var flatTypeNames = map[string]flatTypes{
	"string": flatString, "number": flatNumber, "integer": flatInteger,
	"boolean": flatBoolean, "null": flatNull, "object": flatObject, "array": flatArray,
}

// flatAnnotations are the keywords that assert nothing in every draft the
// compiler reads, and may therefore sit beside the ones the shortcut
// checks. (format is not one of them: drafts 7 and earlier assert it.)
var flatAnnotations = map[string]bool{
	"$schema": true, "$comment": true, "title": true, "description": true,
	"examples": true, "default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// maxFlatRequired bounds the required names (one bit each).
const maxFlatRequired = 64

// compileFlat returns the shortcut for the schema raw, or nil when raw
// uses anything but "type": "object", "properties" whose members carry
// only a "type" (a name or a list of names) and annotations, "required",
// "additionalProperties" as a boolean, and annotations. It is called only
// for a schema the compiler accepted.
func compileFlat(raw []byte) *flatSchema {
	v, err := decodeStrict(raw)
	if err != nil {
		return nil
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	f := &flatSchema{members: map[string]flatMember{}}
	for k, v := range top {
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				t, ok := flatPropertyTypes(p)
				if !ok {
					return nil
				}
				f.members[name] = flatMember{types: t, declared: true}
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			f.closed = !b
		case "required":
		default:
			if !flatAnnotations[k] {
				return nil
			}
		}
	}
	if v, ok := top["required"]; ok {
		names, ok := v.([]any)
		if !ok || len(names) > maxFlatRequired {
			return nil
		}
		for i, n := range names {
			name, ok := n.(string)
			if !ok {
				return nil
			}
			m := f.members[name]
			if m.req != 0 {
				return nil // repeated; the metaschema refuses it anyway
			}
			m.req = 1 << i
			f.members[name] = m
			f.required |= m.req
		}
	}
	return f
}

// flatPropertyTypes reads a property's schema: an object of "type" and
// annotations only.
func flatPropertyTypes(p any) (flatTypes, bool) {
	m, ok := p.(map[string]any)
	if !ok {
		return 0, false
	}
	var t flatTypes
	for k, v := range m {
		switch {
		case k == "type":
			switch v := v.(type) {
			case string:
				if t = flatTypeNames[v]; t == 0 {
					return 0, false
				}
			case []any:
				if len(v) == 0 {
					return 0, false
				}
				for _, n := range v {
					s, _ := n.(string)
					one := flatTypeNames[s]
					if one == 0 {
						return 0, false
					}
					t |= one
				}
			default:
				return 0, false
			}
		case !flatAnnotations[k] || k == "$schema":
			return 0, false
		}
	}
	return t, true
}

// admits reports whether the JSON value raw (one the strict pass checked)
// has one of the types in t. An integer is admitted only as digits with
// no fraction or exponent: "1.0" is an integer to the validator too, but
// the shortcut leaves such numbers to it.
func (t flatTypes) admits(raw []byte) bool {
	if t == 0 {
		return true
	}
	var got flatTypes
	switch c := raw[0]; {
	case c == '"':
		got = flatString
	case c == 't' || c == 'f':
		got = flatBoolean
	case c == 'n':
		got = flatNull
	case c == '{':
		got = flatObject
	case c == '[':
		got = flatArray
	default:
		got = flatNumber
		if isDigitsOnly(raw) {
			got |= flatInteger
		}
	}
	return t&got != 0
}

func isDigitsOnly(num []byte) bool {
	for _, c := range num {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// errFlatMiss ends the shortcut's walk: the full path decides.
var errFlatMiss = errors.New("not for the shortcut")

// valid reports whether params, a tools/call's raw params, are one I-JSON
// object, without two member names equal up to case anywhere, whose
// "arguments" (an empty object when absent) satisfy f. False means only
// that the full path must decide.
func (f *flatSchema) valid(params []byte) bool {
	d := strictDecoder{d: params}
	d.space()
	if d.i >= len(d.d) || d.d[d.i] != '{' {
		return false
	}
	var seen uint64
	err := d.members(0, func(k []byte) error {
		if string(k) == "_meta" {
			return f.skipMeta(&d)
		}
		if string(k) != "arguments" {
			return d.skip(1)
		}
		d.space()
		if d.i >= len(d.d) || d.d[d.i] != '{' {
			return errFlatMiss
		}
		return d.members(1, func(name []byte) error {
			m, ok := f.members[string(name)]
			if !ok || !m.declared {
				if f.closed {
					return errFlatMiss
				}
			}
			seen |= m.req
			d.space()
			start := d.i
			if err := d.skip(2); err != nil {
				return err
			}
			if !m.types.admits(d.d[start:d.i]) {
				return errFlatMiss
			}
			return nil
		})
	})
	if err != nil || d.folded {
		return false
	}
	d.space()
	return d.i == len(d.d) && seen == f.required
}

// skipMeta is d.skip(1) for the value of params._meta, which a 2026-07-28
// client sends byte for byte the same with every request (its protocol
// version, capabilities and clientInfo): the strict pass over it was most
// of the shortcut's cost. An object whose bytes are those of the last
// _meta the pass proved I-JSON without two names equal up to case is
// passed over without reading it again: a JSON object ends at its own
// closing brace, and the pass reads nothing past it, so the same bytes at
// the same depth are judged the same way. Any other value is read in full
// and, when it passes and is an object of at most maxMetaMemo bytes,
// remembered in place of the last.
func (f *flatSchema) skipMeta(d *strictDecoder) error {
	d.space()
	if m := f.meta.Load(); m != nil && bytes.HasPrefix(d.d[d.i:], *m) {
		d.i += len(*m)
		return nil
	}
	start, folded := d.i, d.folded
	d.folded = false
	if err := d.skip(1); err != nil {
		return err
	}
	if v := d.d[start:d.i]; !d.folded && v[0] == '{' && len(v) <= maxMetaMemo {
		m := bytes.Clone(v)
		f.meta.Store(&m)
	}
	d.folded = d.folded || folded
	return nil
}
