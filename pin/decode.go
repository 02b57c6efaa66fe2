package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A record of 10,000 tools is an 11 MB file, nearly all of it the
// definitions member. json.Decoder reads a whole value into its own buffer
// before decoding it, so decoding the record as one value held a second
// copy of the file (16 MB of buffer, grown by doubling) beside the file and
// the decoded definitions; at the first pin, whose record is decoded back
// before it is written, that was the session's largest allocation.
//
// decodeMembers decodes the same record member by member instead: the
// Decoder then holds one member at a time (the largest, a profile's list of
// names and digests, is about a tenth of the definitions), and the
// definitions are decoded one by one. It accepts exactly what
// decodeStrict(data, r) accepts and decodes it to the same record
// (FuzzDecodeMembersIsDecodeStrict compares the two): every member but the
// definitions is decoded by the same strict Decoder, alone in an object of
// its own, so that encoding/json matches its name to a field as it would
// have (case-insensitively; a repeated member decodes into the same field
// again); the definitions are decoded as encoding/json decodes a map of
// raw messages.
func decodeMembers(data []byte, r *record) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	return decodeFrom(dec, r, func(dec *json.Decoder, _ string) (json.RawMessage, error) {
		var n valueLen
		if err := dec.Decode(&n); err != nil {
			return nil, err
		}
		// The Decoder has just read the value through InputOffset.
		end := dec.InputOffset()
		if n <= 0 || end > int64(len(data)) || int64(n) > end {
			return nil, errors.New("definitions: a value is not where the decoder read it")
		}
		raw := json.RawMessage(data[end-int64(n) : end : end])
		if nestingDepth(raw) > maxDefinitionDepth {
			return nil, errDefinitionDepth
		}
		return raw, nil
	})
}

// maxDefinitionDepth is the deepest a definition may nest for the whole
// record to decode: encoding/json refuses values nested deeper than 10,000,
// and a definition is nested two deep in the record (the record object,
// its definitions object). A definition decoded by a Decoder of its own
// would be counted from zero: the member-by-member decoders check its
// depth themselves, so that they accept exactly what decoding the whole
// record accepts.
const maxDefinitionDepth = 10000 - 2

var errDefinitionDepth = errors.New("definitions: a value nests too deep")

// nestingDepth is how deep arrays and objects nest in the JSON value b,
// which a Decoder has checked.
func nestingDepth(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// decodeFrom is decodeMembers reading from dec, with each definition's raw
// message read by definition (given the definition's key).
func decodeFrom(dec *json.Decoder, r *record, definition func(dec *json.Decoder, key string) (json.RawMessage, error)) error {
	errParse := errors.New("record file does not parse")
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	switch {
	case err != nil:
		return errParse
	case tok == nil:
		// null: Decode leaves the record as it is.
	case tok != json.Delim('{'):
		return errParse
	default:
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok {
				return errParse
			}
			if key == "definitions" {
				if err := decodeDefinitions(dec, &r.Definitions, definition); err != nil {
					return errParse
				}
				continue
			}
			var value json.RawMessage
			if err := dec.Decode(&value); err != nil {
				return errParse
			}
			if err := decodeMember(key, value, r); err != nil {
				return errParse
			}
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
			return errParse
		}
	}
	if dec.More() {
		return errors.New("record file has data after the record")
	}
	return nil
}

// decodeMember decodes the member key: value into r as the strict Decoder
// decodes it as part of the whole record.
func decodeMember(key string, value json.RawMessage, r *record) error {
	name, err := json.Marshal(key)
	if err != nil {
		return err
	}
	obj := make([]byte, 0, len(name)+len(value)+3)
	obj = append(obj, '{')
	obj = append(obj, name...)
	obj = append(obj, ':')
	obj = append(obj, value...)
	obj = append(obj, '}')
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.DisallowUnknownFields()
	return dec.Decode(r)
}

// decodeDefinitions decodes the next value of dec into *defs as
// encoding/json decodes a map[string]json.RawMessage: null sets the map to
// nil, an object adds its members to the map (made if nil), a repeated key
// keeping its last value; anything else is an error. Each member's value is
// read by definition.
//
// decodeMembers's definition takes each raw message as the value's bytes
// in the record file's data, not a copy of them (data is not changed
// afterwards by any caller of decodeRecord): a record then costs no second
// copy of its definitions.
func decodeDefinitions(dec *json.Decoder, defs *map[string]json.RawMessage, definition func(dec *json.Decoder, key string) (json.RawMessage, error)) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil:
		*defs = nil
		return nil
	case tok != json.Delim('{'):
		return errors.New("definitions: not an object")
	}
	if *defs == nil {
		*defs = map[string]json.RawMessage{}
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return errors.New("definitions: a key is not a string")
		}
		raw, err := definition(dec, key)
		if err != nil {
			return err
		}
		(*defs)[key] = raw
	}
	tok, err = dec.Token()
	if err != nil || tok != json.Delim('}') {
		return errors.New("definitions: not an object")
	}
	return nil
}

// valueLen is the length of a JSON value that json.Decoder has checked, as
// json.RawMessage would receive it (the value's bytes, without the space
// around them).
type valueLen int

func (n *valueLen) UnmarshalJSON(b []byte) error {
	*n = valueLen(len(b))
	return nil
}

// readBack decodes a record file of server id read from rd as
// decodeRecord decodes a version 2 record's bytes, and checks it as
// decodeRecord does; what follows the record must be its final newline
// alone. The file is read a member at a time (see decodeMembers), and a
// definition whose bytes are those of known's raw message under its key,
// as every one is when the file is the record that was just written or
// when a session lists what is pinned, is given known's raw message rather
// than a copy: reading the record of a large server then holds neither the
// file nor its definitions a second time. rd must be bounded by the caller.
func readBack(id string, rd io.Reader, known map[string]json.RawMessage) (*record, error) {
	dec := json.NewDecoder(rd)
	r := new(record)
	err := decodeFrom(dec, r, func(dec *json.Decoder, key string) (json.RawMessage, error) {
		v := sameValue{want: known[key]}
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if nestingDepth(v.got) > maxDefinitionDepth {
			return nil, errDefinitionDepth
		}
		return v.got, nil
	})
	if err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(io.MultiReader(dec.Buffered(), rd))
	if err != nil {
		return nil, err
	}
	if string(rest) != "\n" {
		return nil, errors.New("record file has data after the record")
	}
	if err := r.check(id); err != nil {
		return nil, fmt.Errorf("record file is malformed: %v", err)
	}
	return r, nil
}

// sameValue decodes a JSON value as json.RawMessage does: got is want when
// the value's bytes are want's, and a copy of them otherwise.
type sameValue struct{ want, got json.RawMessage }

func (v *sameValue) UnmarshalJSON(b []byte) error {
	if v.want != nil && bytes.Equal(b, v.want) {
		v.got = v.want
	} else {
		v.got = bytes.Clone(b)
	}
	return nil
}
