package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"
)

// DecodeStrict decodes data into v (a pointer to a struct whose json tags
// declare every key) exactly as strictly as the policy file: unknown or
// repeated keys, null, wrong types, invalid UTF-8 and trailing data are
// refused with a *FileError naming the line, column and key path, never
// the value. Other host config files that grant authority (the gateway's
// auth.json) use it so that there is one strict dialect to learn. Only
// string, bool, integer, struct, map and slice fields are supported.
func DecodeStrict(name string, data []byte, maxBytes int, v any) error {
	w := &walker{name: name, data: data, pos: map[string]int{}}
	if len(data) > maxBytes {
		return w.errAt(-1, "", fmt.Sprintf("the file is larger than %d bytes", maxBytes))
	}
	if !utf8.Valid(data) {
		return w.errAt(invalidUTF8Offset(data), "", "invalid UTF-8")
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic("policy: DecodeStrict needs a pointer to a struct")
	}
	w.dec = json.NewDecoder(bytes.NewReader(data))
	w.dec.UseNumber()
	if err := w.value(t.Elem(), "", 0); err != nil {
		return err
	}
	end := w.start()
	if _, err := w.dec.Token(); err != io.EOF {
		return w.errAt(end, "", "unexpected data after the top-level object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return w.errAt(-1, "", "the file does not decode")
	}
	return nil
}
