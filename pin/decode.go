package pin

import (
	"bytes"
	"encoding/json"
	"errors"
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
	errParse := errors.New("record file does not parse")
	dec := json.NewDecoder(bytes.NewReader(data))
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
				if err := decodeDefinitions(dec, data, &r.Definitions); err != nil {
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

// decodeDefinitions decodes the next value of dec, which reads data, into
// *defs as encoding/json decodes a map[string]json.RawMessage: null sets
// the map to nil, an object adds its members to the map (made if nil), a
// repeated key keeping its last value; anything else is an error.
//
// Each raw message is the value's bytes in data, not a copy of them (data
// is not changed afterwards by any caller of decodeRecord): a record
// decoded back before it is written then costs no second copy of its
// definitions.
func decodeDefinitions(dec *json.Decoder, data []byte, defs *map[string]json.RawMessage) error {
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
		var n valueLen
		if err := dec.Decode(&n); err != nil {
			return err
		}
		// The Decoder has just read the value through InputOffset.
		end := dec.InputOffset()
		if n <= 0 || end > int64(len(data)) || int64(n) > end {
			return errors.New("definitions: a value is not where the decoder read it")
		}
		(*defs)[key] = json.RawMessage(data[end-int64(n) : end : end])
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
