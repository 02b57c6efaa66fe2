package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// This file is a JSON-with-comments reader that remembers where every value
// sits in the source, so that an edit can replace exactly the bytes of one
// value and leave every comment, blank line and key order alone.
//
// It accepts RFC 8259 JSON plus what VS Code, Zed and Gemini CLI accept in
// their settings files: // and /* */ comments, trailing commas in objects and
// arrays, and a leading UTF-8 byte order mark. It accepts nothing else (no
// single quotes, no bare keys, no NaN): a file it cannot read is reported
// and never edited.

// maxDepth bounds the nesting of objects and arrays. Client configs nest a
// handful of levels; 256 leaves room for any settings file while keeping a
// hostile file from exhausting the stack.
const maxDepth = 256

// NodeKind is the type of a JSON value.
type NodeKind uint8

// The kinds of JSON values.
const (
	Null NodeKind = iota
	Bool
	Number
	String
	Array
	Object
)

// Node is one JSON value and where it sits in the source.
type Node struct {
	Kind NodeKind
	// Start and End delimit the value's bytes in the source: src[Start:End].
	Start, End int
	// Str is a String's decoded text, a Number's or Bool's literal.
	Str     string
	Members []Member // Object
	Elems   []*Node  // Array
}

// Member is one key of an object.
type Member struct {
	Key string
	// KeyStart and KeyEnd delimit the key's quoted string.
	KeyStart, KeyEnd int
	// Comma is the offset of the comma that follows the value, or -1.
	Comma int
	Value *Node
}

// SyntaxError says where a config file stops being valid. It never holds
// the file's text: a config may hold secrets.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ParseJSONC parses src as JSON with comments and trailing commas.
func ParseJSONC(src []byte) (*Node, error) {
	p := &jsonParser{src: src}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.fail("unexpected text after the end of the document")
	}
	return n, nil
}

type jsonParser struct {
	src []byte
	pos int
}

func (p *jsonParser) fail(msg string) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line++
			col = 1
		} else if c&0xC0 != 0x80 {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

// space skips whitespace and comments.
func (p *jsonParser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			start := p.pos
			p.pos += 2
			for {
				if p.pos+1 >= len(p.src) {
					p.pos = start
					return p.fail("unterminated /* comment")
				}
				if p.src[p.pos] == '*' && p.src[p.pos+1] == '/' {
					p.pos += 2
					break
				}
				p.pos++
			}
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) value(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, p.fail(fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	if p.pos >= len(p.src) {
		return nil, p.fail("unexpected end of file")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	default:
		for _, lit := range []struct {
			word string
			kind NodeKind
		}{{"true", Bool}, {"false", Bool}, {"null", Null}} {
			if p.hasWord(lit.word) {
				n := &Node{Kind: lit.kind, Start: p.pos, End: p.pos + len(lit.word), Str: lit.word}
				p.pos = n.End
				return n, nil
			}
		}
		return nil, p.fail("expected a value")
	}
}

func (p *jsonParser) hasWord(w string) bool {
	end := p.pos + len(w)
	if end > len(p.src) || string(p.src[p.pos:end]) != w {
		return false
	}
	return end == len(p.src) || !isWordByte(p.src[end])
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func (p *jsonParser) object(depth int) (*Node, error) {
	n := &Node{Kind: Object, Start: p.pos}
	p.pos++
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.End = p.pos
			return n, nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail("expected a key in double quotes or '}'")
		}
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail("expected ':' after the key")
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m := Member{Key: key.Str, KeyStart: key.Start, KeyEnd: key.End, Comma: -1, Value: v}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			m.Comma = p.pos
			p.pos++
			n.Members = append(n.Members, m)
			continue
		}
		n.Members = append(n.Members, m)
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.End = p.pos
			return n, nil
		}
		return nil, p.fail("expected ',' or '}'")
	}
}

func (p *jsonParser) array(depth int) (*Node, error) {
	n := &Node{Kind: Array, Start: p.pos}
	p.pos++
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.End = p.pos
			return n, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.End = p.pos
			return n, nil
		}
		return nil, p.fail("expected ',' or ']'")
	}
}

func (p *jsonParser) string() (*Node, error) {
	start := p.pos
	p.pos++
	for {
		if p.pos >= len(p.src) {
			p.pos = start
			return nil, p.fail("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				p.pos = start
				return nil, p.fail("invalid string")
			}
			return &Node{Kind: String, Start: start, End: p.pos, Str: s}, nil
		case c < 0x20:
			return nil, p.fail("control character in a string")
		case c == '\\':
			if p.pos+1 >= len(p.src) {
				return nil, p.fail("unterminated escape")
			}
			switch p.src[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.src) || !isHex4(p.src[p.pos+2:p.pos+6]) {
					return nil, p.fail("invalid \\u escape")
				}
				p.pos += 6
			default:
				return nil, p.fail("invalid escape")
			}
		default:
			p.pos++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *jsonParser) number() (*Node, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.pos < len(p.src) && isWordByte(p.src[p.pos]) {
		return nil, p.fail("invalid number")
	}
	return &Node{Kind: Number, Start: start, End: p.pos, Str: string(p.src[start:p.pos])}, nil
}

// errDuplicateKey reports a key that appears twice in an object mcpseal
// must edit: which one the client reads is not certain, so mcpseal edits
// neither.
var errDuplicateKey = errors.New("a key appears twice")

// Get returns the member of an object named key; nil when n is not an
// object or has no such member. It fails on a duplicate key.
func (n *Node) Get(key string) (*Member, error) {
	if n == nil || n.Kind != Object {
		return nil, nil
	}
	var found *Member
	for i := range n.Members {
		if n.Members[i].Key == key {
			if found != nil {
				return nil, fmt.Errorf("%w: %q", errDuplicateKey, key)
			}
			found = &n.Members[i]
		}
	}
	return found, nil
}

// Value returns n as the value encoding/json (with UseNumber) would give:
// map[string]any, []any, string, json.Number, bool or nil. A duplicate key
// keeps its last value, as encoding/json does.
func (n *Node) Value() any {
	switch n.Kind {
	case Object:
		m := make(map[string]any, len(n.Members))
		for _, mem := range n.Members {
			m[mem.Key] = mem.Value.Value()
		}
		return m
	case Array:
		a := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			a[i] = e.Value()
		}
		return a
	case String:
		return n.Str
	case Number:
		return json.Number(n.Str)
	case Bool:
		return n.Str == "true"
	}
	return nil
}

// Strings returns an array of strings; ok is false when n is not one.
func (n *Node) Strings() ([]string, bool) {
	if n == nil || n.Kind != Array {
		return nil, false
	}
	out := make([]string, len(n.Elems))
	for i, e := range n.Elems {
		if e.Kind != String {
			return nil, false
		}
		out[i] = e.Str
	}
	return out, true
}
