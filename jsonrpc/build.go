package jsonrpc

import (
	"strconv"
	"unicode/utf8"
)

// The builders write the messages the gate sends itself: compact JSON with
// "jsonrpc":"2.0" first. Raw arguments (ids, params, results, error data) are
// copied verbatim and must be valid JSON values; an id or params taken from
// Peek is. A nil or empty id is written as null, a nil or empty result as
// null, and nil or empty params or data are omitted.

// NewRequest returns a request. params is raw JSON or nil.
func NewRequest(id []byte, method string, params []byte) []byte {
	b := make([]byte, 0, 48+len(id)+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// NewNotification returns a notification. params is raw JSON or nil.
func NewNotification(method string, params []byte) []byte {
	b := make([]byte, 0, 40+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// NewResult returns a result response. result is raw JSON.
func NewResult(id []byte, result []byte) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"result":`...)
	b = appendRaw(b, result)
	return append(b, '}')
}

// NewError returns an error response. data is raw JSON or nil; a nil id is
// written as null, for errors about a message whose id is unknown.
func NewError(id []byte, code int, message string, data []byte) []byte {
	b := make([]byte, 0, 80+len(id)+len(message)+len(data))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRaw(b, id)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, message)
	if len(data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}"...)
}

// appendRaw appends the raw value v, or null when v is empty.
func appendRaw(b, v []byte) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}

func appendParams(b, params []byte) []byte {
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// AppendString appends s as a JSON string (see appendString): for a
// request the gate builds from values another side sent (a cursor, a
// protocol version), which strconv.Quote would escape as Go, not JSON.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString appends s as a JSON string. It escapes '"', '\\' and control
// characters and writes invalid UTF-8 as U+FFFD, so the result always passes
// Peek and never contains a newline.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
