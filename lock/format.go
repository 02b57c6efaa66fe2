package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpseal/mcpseal/canon"
)

// MaxLockSize bounds a lock file. A lock holds every definition of every
// server in full; the largest real servers list a few hundred KiB of
// definitions, so 64 MiB is far beyond any project and still a bound.
const MaxLockSize = 64 << 20

// Marshal encodes l the one way mcpseal writes locks: JSON indented by two
// spaces, members in a fixed order, servers sorted by name, definitions
// sorted by name and shown in their canonical form, no HTML escaping, and
// a final newline. Parse accepts only this form.
func (l *Lock) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Parse reads a lock file and checks its integrity (see the package doc).
// The error is ErrUnknownVersion, or wraps ErrTampered; an *IntegrityError
// lists every fault found.
func Parse(data []byte) (*Lock, error) {
	if len(data) > MaxLockSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrTampered, MaxLockSize)
	}
	data = normalizeNewlines(data)
	if _, err := canon.Transform(data); err != nil {
		// Not one I-JSON value: invalid, a repeated member name, too deep.
		return nil, fmt.Errorf("%w: not a valid lock file (%v)", ErrTampered, err)
	}
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: not a lock file", ErrTampered)
	}
	if string(head.Version) != strconv.Itoa(FormatVersion) {
		if head.Version == nil {
			return nil, fmt.Errorf("%w: the file has no format version", ErrUnknownVersion)
		}
		return nil, fmt.Errorf("%w %s (this mcpseal reads version %d)", ErrUnknownVersion, quoteShort(string(head.Version)), FormatVersion)
	}
	l := new(Lock)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrTampered, decodeError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the lock", ErrTampered)
	}
	if faults := l.check(); len(faults) > 0 {
		return nil, &IntegrityError{Faults: faults}
	}
	again, err := l.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTampered, err)
	}
	if !bytes.Equal(again, data) {
		return nil, fmt.Errorf("%w: the file is not in the form mcpseal writes (edited by hand?); its contents are consistent, so 'mcpseal lock' can rewrite it", ErrTampered)
	}
	return l, nil
}

// decodeError describes a decoding error without quoting the input.
func decodeError(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("member %q has the wrong type", e.Field)
	case *json.SyntaxError:
		return fmt.Sprintf("invalid JSON at offset %d", e.Offset)
	}
	if s := err.Error(); len(s) < 120 && bytes.HasPrefix([]byte(s), []byte("json: unknown field")) {
		return "unknown member " + s[len("json: unknown field "):]
	}
	return "not a lock file"
}

// normalizeNewlines turns CRLF line ends (a checkout with autocrlf) into
// LF. JSON strings cannot hold a raw CR, so only line ends change.
func normalizeNewlines(data []byte) []byte {
	if !bytes.Contains(data, []byte("\r\n")) {
		return data
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// A Fault is one integrity problem of a lock.
type Fault struct {
	// Server is the entry's name, "" for the whole file.
	Server string
	// Where is the kind and name of the definition ("tools read_file"),
	// "instructions", "command", "package", "contract", or "".
	Where string
	// Reason is a fixed description; it never quotes definition text.
	Reason string
}

func (f Fault) String() string {
	s := f.Reason
	if f.Where != "" {
		s = f.Where + ": " + s
	}
	if f.Server != "" {
		s = "server " + strconv.Quote(f.Server) + ": " + s
	}
	return s
}

// IntegrityError lists every fault of a lock that fails its integrity
// check. It wraps ErrTampered.
type IntegrityError struct{ Faults []Fault }

func (e *IntegrityError) Error() string {
	s := ErrTampered.Error() + ": " + e.Faults[0].String()
	if n := len(e.Faults) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

func (e *IntegrityError) Unwrap() error { return ErrTampered }

// quoteShort quotes text from a file for an error message: control
// characters escaped, cut at 40 bytes.
func quoteShort(s string) string {
	const max = 40 // why: enough to recognise a value, too short to carry a message
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}
