// Package pbwire is the protocol buffers wire format, the part of it
// mcpseal's OTLP encoders and answer readers use: tags, varints, fixed
// 32- and 64-bit values and length-delimited bytes, appended to a buffer
// or consumed from one. Its functions are named, and behave, as
// google.golang.org/protobuf/encoding/protowire's (FuzzConsume and
// TestAppendIsProtowires compare the two), so that the mcpseal binary
// need not link that module: its initialisation reads the executable
// file at every start (internal/detrand), and the OTLP message types
// that come with it register their descriptors there too
// (docs/performance.md, issue 12).
//
// A varint is at most ten bytes, the tenth holding bit 63 alone; a field
// number is 1 to 2^29-1 on append and at least 1 on consume (as
// protowire: larger numbers that still fit an int32 are returned). The
// consume functions return a negative length for any malformed input.
//
// Example: the message {1: "hi", 2: 150} is
//
//	b = pbwire.AppendTag(b, 1, pbwire.BytesType)
//	b = pbwire.AppendString(b, "hi")   // 0a 02 68 69
//	b = pbwire.AppendTag(b, 2, pbwire.VarintType)
//	b = pbwire.AppendVarint(b, 150)    // 10 96 01
package pbwire

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Number is a field number.
type Number int32

// Type is a wire type.
type Type int8

// The wire types.
const (
	VarintType     Type = 0
	Fixed64Type    Type = 1
	BytesType      Type = 2
	StartGroupType Type = 3
	EndGroupType   Type = 4
	Fixed32Type    Type = 5
)

// maxGroupDepth bounds the nesting of groups ConsumeFieldValue skips
// (protowire's DefaultRecursionLimit), so that hostile input cannot
// exhaust the stack.
const maxGroupDepth = 10000

// malformed is the length the consume functions return for input that
// does not parse.
const malformed = -1

// AppendTag appends the tag of field num with wire type typ.
func AppendTag(b []byte, num Number, typ Type) []byte {
	return AppendVarint(b, uint64(num)<<3|uint64(typ&7))
}

// AppendVarint appends v as a varint.
func AppendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// SizeVarint is the length of v as a varint.
func SizeVarint(v uint64) int {
	// 1 byte per 7 bits, at least one: (bits*9 + 64) / 64 is ceil(bits/7)
	// for 1..64 bits, and 1 for none.
	return int(9*uint32(bits.Len64(v))+64) / 64
}

// AppendFixed32 appends v little-endian.
func AppendFixed32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// AppendFixed64 appends v little-endian.
func AppendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// AppendDouble appends v as a fixed 64-bit value.
func AppendDouble(b []byte, v float64) []byte { return AppendFixed64(b, math.Float64bits(v)) }

// AppendBytes appends v with its length before it.
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// AppendString appends v with its length before it.
func AppendString(b []byte, v string) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// BeginMessage appends the tag of an embedded message (field num) and one
// byte for its length to *b, and returns where that byte is; EndMessage
// writes the length there once the message is appended, moving the
// message when its length needs more than one byte. Nested messages end
// innermost first, so an outer length counts its inner ones' final sizes.
func BeginMessage(b *[]byte, num Number) int {
	*b = AppendTag(*b, num, BytesType)
	*b = append(*b, 0)
	return len(*b) - 1
}

// EndMessage ends the message BeginMessage began at at.
func EndMessage(b *[]byte, at int) {
	n := len(*b) - at - 1
	if n < 0x80 {
		(*b)[at] = byte(n)
		return
	}
	w := SizeVarint(uint64(n))
	var pad [9]byte
	*b = append(*b, pad[:w-1]...)
	copy((*b)[at+w:], (*b)[at+1:at+1+n])
	AppendVarint((*b)[at:at], uint64(n))
}

// EncodeBool is a bool as a varint's value.
func EncodeBool(x bool) uint64 {
	if x {
		return 1
	}
	return 0
}

// ConsumeVarint reads a varint from the start of b and returns it and
// its length.
func ConsumeVarint(b []byte) (v uint64, n int) {
	for i := 0; i < 10 && i < len(b); i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, malformed // more than 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, malformed // truncated
}

// ConsumeTag reads a tag from the start of b.
func ConsumeTag(b []byte) (Number, Type, int) {
	v, n := ConsumeVarint(b)
	if n < 0 {
		return 0, 0, n
	}
	if v>>3 > math.MaxInt32 || v>>3 < 1 {
		return 0, 0, malformed
	}
	return Number(v >> 3), Type(v & 7), n
}

// ConsumeFixed32 reads a little-endian 32-bit value.
func ConsumeFixed32(b []byte) (uint32, int) {
	if len(b) < 4 {
		return 0, malformed
	}
	return binary.LittleEndian.Uint32(b), 4
}

// ConsumeFixed64 reads a little-endian 64-bit value.
func ConsumeFixed64(b []byte) (uint64, int) {
	if len(b) < 8 {
		return 0, malformed
	}
	return binary.LittleEndian.Uint64(b), 8
}

// ConsumeBytes reads a length-delimited value; v aliases b.
func ConsumeBytes(b []byte) (v []byte, n int) {
	m, n := ConsumeVarint(b)
	if n < 0 {
		return nil, n
	}
	if m > uint64(len(b)-n) {
		return nil, malformed
	}
	return b[n : n+int(m)], n + int(m)
}

// ConsumeFieldValue returns the length of the value of field num, of
// wire type typ, at the start of b (its tag already read). A group's
// length includes its end tag, which must carry num.
func ConsumeFieldValue(num Number, typ Type, b []byte) int {
	return consumeFieldValue(num, typ, b, maxGroupDepth)
}

func consumeFieldValue(num Number, typ Type, b []byte, depth int) int {
	switch typ {
	case VarintType:
		_, n := ConsumeVarint(b)
		return n
	case Fixed32Type:
		_, n := ConsumeFixed32(b)
		return n
	case Fixed64Type:
		_, n := ConsumeFixed64(b)
		return n
	case BytesType:
		_, n := ConsumeBytes(b)
		return n
	case StartGroupType:
		if depth < 0 {
			return malformed
		}
		n0 := len(b)
		for {
			num2, typ2, n := ConsumeTag(b)
			if n < 0 {
				return n
			}
			b = b[n:]
			if typ2 == EndGroupType {
				if num2 != num {
					return malformed
				}
				return n0 - len(b)
			}
			n = consumeFieldValue(num2, typ2, b, depth-1)
			if n < 0 {
				return n
			}
			b = b[n:]
		}
	default: // an end group with no start, or a reserved type
		return malformed
	}
}
