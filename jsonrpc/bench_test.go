package jsonrpc

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

var smallRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris","units":"metric"},"_meta":{"progressToken":7}}}`)

func BenchmarkPeekSmall(b *testing.B) {
	b.SetBytes(int64(len(smallRequest)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Peek(smallRequest); err != nil {
			b.Fatal(err)
		}
	}
}

const tenMB = 10 << 20

// largeResult wraps content, grown to about 10 MB by part, in a tools/call
// result.
func largeResult(open, part, sep, close string) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":7,"result":` + open)
	for i := 0; buf.Len() < tenMB; i++ {
		if i > 0 {
			buf.WriteString(sep)
		}
		fmt.Fprintf(&buf, part, i)
	}
	buf.WriteString(close + `}`)
	return buf.Bytes()
}

func BenchmarkPeekLarge10MB(b *testing.B) {
	frames := []struct {
		name  string
		frame []byte
	}{
		// Source code as text content: mostly ASCII, escapes every line.
		{"text", largeResult(`{"content":[{"type":"text","text":"`,
			`func f%d(x int) error {\n\tif x > 0 {\n\t\treturn fmt.Errorf(\"bad: %%d\", x)\n\t}\n\treturn nil\n}\n`, "", `"}]}`)},
		// An image as base64: one long plain string.
		{"base64", largeResult(`{"content":[{"type":"image","mimeType":"image/png","data":"`,
			`iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk%07dYPQDwAEhQGAhKmMIQAAAABJRU5ErkJggg`, "", `"}]}`)},
		// Many small objects: numbers, literals, short strings.
		{"structured", largeResult(`{"items":[`,
			`{"id":%d,"name":"item","price":12.5,"tags":["a","bb"],"ok":true,"meta":null}`, ",", `]}`)},
		// Text in several scripts: a third of the bytes are not ASCII.
		{"unicode", largeResult(`{"content":[{"type":"text","text":"`,
			`第%d章 東京は晴れ。Ünïcödé naïve café — 😀 résumé `, "", `"}]}`)},
	}
	for _, f := range frames {
		b.Run(f.name, func(b *testing.B) {
			if _, err := Peek(f.frame); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Peek(f.frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReader(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 1 << 20} {
		frame := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size-80) + `"}]}}`
		n := max(1, (8<<20)/size)
		stream := []byte(strings.Repeat(frame+"\n", n))
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(stream), 0)
				for {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(smallRequest) + 1))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(smallRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMembers(b *testing.B) {
	params := smallRequest[bytes.Index(smallRequest, []byte(`{"name"`)) : len(smallRequest)-1]
	b.SetBytes(int64(len(params)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Members(params); err != nil {
			b.Fatal(err)
		}
	}
}
