package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzTransform checks, for any input: Transform never panics; what it
// accepts, encoding/json accepts too; its output is valid JSON with the
// same meaning as the input, and is its own canonical form; IsCanonical
// holds for exactly the inputs Transform returns unchanged.
func FuzzTransform(f *testing.F) {
	v := loadVectors(f)
	for _, x := range v.Valid {
		f.Add([]byte(x.Input))
	}
	for _, x := range v.Invalid {
		f.Add(x.bytes(f))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		if got, want := IsCanonical(in), err == nil && bytes.Equal(out, in); got != want {
			t.Fatalf("IsCanonical(%q) = %v, want %v", in, got, want)
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || !(ce.Err == ErrInvalid || ce.Err == ErrDuplicateKey || ce.Err == ErrDepth) {
				t.Fatalf("error %#v is not an *Error with a sentinel", err)
			}
			if !errorText.MatchString(err.Error()) {
				t.Fatalf("unexpected error text %q", err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted what encoding/json rejects: %q", in)
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON: %q", out)
		}
		again, err := Transform(out)
		if !IsCanonical(out) {
			t.Fatalf("IsCanonical(%q) = false for Transform's output", out)
		}
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}
