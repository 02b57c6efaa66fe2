package wire

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// This file reads Codex's config.toml. The whole file is decoded with
// github.com/BurntSushi/toml (the values), and a small scanner finds where
// each table and key sits (the spans), so that an edit replaces the bytes
// of one value and keeps every comment. Every span the scanner finds is
// decoded again on its own and must give the decoder's value; anything
// the two disagree on is left alone.

// tomlKV is one key = value statement.
type tomlKV struct {
	table            []string // the table it is in ([] for the root)
	key              []string // its dotted key
	lineStart        int      // start of its line
	keyStart         int
	valStart, valEnd int
	lineEnd          int      // the newline that ends the statement, or len(src)
	elems            [][2]int // an array value's elements
}

// tomlTable is one [table] or [[array]] header.
type tomlTable struct {
	key   []string
	start int // start of the header's line
	array bool
}

type tomlScanner struct {
	src    []byte
	pos    int
	tables []tomlTable
	kvs    []tomlKV
}

var errTOMLScan = errors.New("the TOML scanner lost its place")

func scanTOML(src []byte) (*tomlScanner, error) {
	s := &tomlScanner{src: src}
	var current []string
	for {
		s.skip(true)
		if s.pos >= len(src) {
			return s, nil
		}
		lineStart := s.lineStart(s.pos)
		if src[s.pos] == '[' {
			t := tomlTable{start: lineStart}
			s.pos++
			if s.pos < len(src) && src[s.pos] == '[' {
				t.array = true
				s.pos++
			}
			key, err := s.key()
			if err != nil {
				return nil, err
			}
			t.key = key
			if !s.eat("]") || t.array && !s.eat("]") {
				return nil, errTOMLScan
			}
			if err := s.endLine(); err != nil {
				return nil, err
			}
			s.tables = append(s.tables, t)
			current = key
			continue
		}
		kv := tomlKV{table: current, lineStart: lineStart, keyStart: s.pos}
		key, err := s.key()
		if err != nil {
			return nil, err
		}
		kv.key = key
		if !s.eat("=") {
			return nil, errTOMLScan
		}
		s.skip(false)
		kv.valStart = s.pos
		if kv.elems, err = s.value(0); err != nil {
			return nil, err
		}
		kv.valEnd = s.pos
		if err := s.endLine(); err != nil {
			return nil, err
		}
		kv.lineEnd = s.pos
		s.kvs = append(s.kvs, kv)
	}
}

func (s *tomlScanner) lineStart(at int) int {
	for at > 0 && s.src[at-1] != '\n' {
		at--
	}
	return at
}

// skip passes spaces and tabs, and with lines also newlines and comments.
func (s *tomlScanner) skip(lines bool) {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t':
			s.pos++
		case lines && (c == '\n' || c == '\r'):
			s.pos++
		case lines && c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		default:
			return
		}
	}
}

func (s *tomlScanner) eat(tok string) bool {
	s.skip(false)
	if strings.HasPrefix(string(s.src[s.pos:min(len(s.src), s.pos+len(tok))]), tok) {
		s.pos += len(tok)
		return true
	}
	return false
}

// endLine passes an optional comment and stops at the newline (or EOF).
func (s *tomlScanner) endLine() error {
	s.skip(false)
	if s.pos < len(s.src) && s.src[s.pos] == '#' {
		for s.pos < len(s.src) && s.src[s.pos] != '\n' {
			s.pos++
		}
	}
	if s.pos < len(s.src) && s.src[s.pos] == '\r' {
		s.pos++
	}
	if s.pos < len(s.src) && s.src[s.pos] != '\n' {
		return errTOMLScan
	}
	return nil
}

// key reads a dotted key.
func (s *tomlScanner) key() ([]string, error) {
	var parts []string
	for {
		s.skip(false)
		if s.pos >= len(s.src) {
			return nil, errTOMLScan
		}
		start := s.pos
		switch s.src[s.pos] {
		case '"', '\'':
			if err := s.str(); err != nil {
				return nil, err
			}
			k, err := decodeTOMLString(string(s.src[start:s.pos]))
			if err != nil {
				return nil, err
			}
			parts = append(parts, k)
		default:
			for s.pos < len(s.src) && isBareKeyByte(s.src[s.pos]) {
				s.pos++
			}
			if s.pos == start {
				return nil, errTOMLScan
			}
			parts = append(parts, string(s.src[start:s.pos]))
		}
		s.skip(false)
		if s.pos < len(s.src) && s.src[s.pos] == '.' {
			s.pos++
			continue
		}
		return parts, nil
	}
}

func isBareKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// str passes one string of any of the four kinds.
func (s *tomlScanner) str() error {
	q := s.src[s.pos]
	triple := strings.Repeat(string(q), 3)
	if strings.HasPrefix(string(s.src[s.pos:min(len(s.src), s.pos+3)]), triple) {
		s.pos += 3
		for s.pos < len(s.src) {
			if q == '"' && s.src[s.pos] == '\\' {
				s.pos += 2
				continue
			}
			if strings.HasPrefix(string(s.src[s.pos:min(len(s.src), s.pos+3)]), triple) {
				s.pos += 3
				for i := 0; i < 2 && s.pos < len(s.src) && s.src[s.pos] == q; i++ {
					s.pos++
				}
				return nil
			}
			s.pos++
		}
		return errTOMLScan
	}
	s.pos++
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == '\n':
			return errTOMLScan
		case q == '"' && c == '\\':
			s.pos += 2
		case c == q:
			s.pos++
			return nil
		default:
			s.pos++
		}
	}
	return errTOMLScan
}

// value passes one value; for an array it returns the elements' spans.
func (s *tomlScanner) value(depth int) ([][2]int, error) {
	if depth > maxDepth || s.pos >= len(s.src) {
		return nil, errTOMLScan
	}
	switch s.src[s.pos] {
	case '"', '\'':
		return nil, s.str()
	case '[':
		s.pos++
		var elems [][2]int
		for {
			s.skip(true)
			if s.pos < len(s.src) && s.src[s.pos] == ']' {
				s.pos++
				return elems, nil
			}
			start := s.pos
			if _, err := s.value(depth + 1); err != nil {
				return nil, err
			}
			elems = append(elems, [2]int{start, s.pos})
			s.skip(true)
			if s.pos < len(s.src) && s.src[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.pos < len(s.src) && s.src[s.pos] == ']' {
				s.pos++
				return elems, nil
			}
			return nil, errTOMLScan
		}
	case '{':
		s.pos++
		for {
			s.skip(true)
			if s.pos < len(s.src) && s.src[s.pos] == '}' {
				s.pos++
				return nil, nil
			}
			if _, err := s.key(); err != nil {
				return nil, err
			}
			if !s.eat("=") {
				return nil, errTOMLScan
			}
			s.skip(false)
			if _, err := s.value(depth + 1); err != nil {
				return nil, err
			}
			s.skip(true)
			if s.pos < len(s.src) && s.src[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.pos < len(s.src) && s.src[s.pos] == '}' {
				s.pos++
				return nil, nil
			}
			return nil, errTOMLScan
		}
	}
	start := s.pos
	for s.pos < len(s.src) && !strings.ContainsRune(" \t\r\n#,]}", rune(s.src[s.pos])) {
		s.pos++
	}
	// A date and time may be separated by a space: 1979-05-27 07:32:00Z.
	if s.pos-start == 10 && s.pos+1 < len(s.src) && s.src[s.pos] == ' ' && '0' <= s.src[s.pos+1] && s.src[s.pos+1] <= '9' && s.src[start+4] == '-' {
		s.pos++
		for s.pos < len(s.src) && !strings.ContainsRune(" \t\r\n#,]}", rune(s.src[s.pos])) {
			s.pos++
		}
	}
	if s.pos == start {
		return nil, errTOMLScan
	}
	return nil, nil
}

// decodeTOMLString decodes one quoted TOML string with the real decoder.
func decodeTOMLString(q string) (string, error) {
	v, err := decodeTOMLValue(q)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", errTOMLScan
	}
	return s, nil
}

// decodeTOMLValue decodes the text of one value with the real decoder.
func decodeTOMLValue(text string) (any, error) {
	var m map[string]any
	if _, err := toml.Decode("v = "+text+"\n", &m); err != nil {
		return nil, errTOMLScan
	}
	return m["v"], nil
}

// tomlString encodes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlSyntaxError turns the decoder's error into one that names only the
// place: its message may quote the file.
func tomlSyntaxError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &SyntaxError{Line: pe.Position.Line, Column: pe.Position.Col, Msg: "invalid TOML"}
	}
	return errors.New("invalid TOML")
}

// sameKey reports whether two dotted keys are equal.
func sameKey(a, b []string) bool { return slices.Equal(a, b) }
