package pbwire

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "internal/pbwire")
}

// TestAppendIsProtowires: every append function writes protowire's bytes.
func TestAppendIsProtowires(t *testing.T) {
	t.Parallel()
	var vs []uint64
	for s := 0; s < 64; s++ {
		vs = append(vs, 1<<s-1, 1<<s, 1<<s+1)
	}
	vs = append(vs, math.MaxUint64)
	for _, v := range vs {
		if got, want := AppendVarint(nil, v), protowire.AppendVarint(nil, v); !bytes.Equal(got, want) {
			t.Errorf("AppendVarint(%d) = %x, protowire %x", v, got, want)
		}
		if got, want := SizeVarint(v), protowire.SizeVarint(v); got != want {
			t.Errorf("SizeVarint(%d) = %d, protowire %d", v, got, want)
		}
		if got, want := AppendFixed64(nil, v), protowire.AppendFixed64(nil, v); !bytes.Equal(got, want) {
			t.Errorf("AppendFixed64(%d) = %x, protowire %x", v, got, want)
		}
		if got, want := AppendFixed32(nil, uint32(v)), protowire.AppendFixed32(nil, uint32(v)); !bytes.Equal(got, want) {
			t.Errorf("AppendFixed32(%d) = %x, protowire %x", uint32(v), got, want)
		}
	}
	for _, num := range []Number{1, 15, 16, 2047, 2048, 1<<29 - 1} {
		for typ := Type(0); typ < 8; typ++ {
			if got, want := AppendTag(nil, num, typ), protowire.AppendTag(nil, protowire.Number(num), protowire.Type(typ)); !bytes.Equal(got, want) {
				t.Errorf("AppendTag(%d, %d) = %x, protowire %x", num, typ, got, want)
			}
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, math.Inf(1), math.NaN(), math.SmallestNonzeroFloat64} {
		if got, want := AppendDouble(nil, f), protowire.AppendFixed64(nil, math.Float64bits(f)); !bytes.Equal(got, want) {
			t.Errorf("AppendDouble(%v) = %x, protowire %x", f, got, want)
		}
	}
	for _, s := range []string{"", "hi", string(make([]byte, 200)), string(make([]byte, 20000))} {
		if got, want := AppendString([]byte{9}, s), protowire.AppendString([]byte{9}, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%d bytes) differs from protowire", len(s))
		}
		if got, want := AppendBytes(nil, []byte(s)), protowire.AppendBytes(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Errorf("AppendBytes(%d bytes) differs from protowire", len(s))
		}
	}
	if EncodeBool(true) != protowire.EncodeBool(true) || EncodeBool(false) != protowire.EncodeBool(false) {
		t.Error("EncodeBool differs from protowire")
	}
}

// consumeSeeds are inputs at the edges of each reader: truncations,
// overlong varints, the largest field numbers, groups nested, unclosed
// and closed by another number.
var consumeSeeds = [][]byte{
	{},
	{0x08, 0x96, 0x01},
	{0x80},
	{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
	{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	{0x80, 0x00},
	{0x00},
	{0x07},
	{0xf8, 0xff, 0xff, 0xff, 0x0f},
	{0xf8, 0xff, 0xff, 0xff, 0x7f},
	{0x0a, 0x02, 'h', 'i'},
	{0x0a, 0x05, 'h'},
	{0x0d, 1, 2, 3},
	{0x09, 1, 2, 3, 4, 5, 6, 7, 8},
	{0x0b, 0x08, 0x01, 0x0c},
	{0x0b, 0x13, 0x14, 0x0c},
	{0x0b, 0x08, 0x01, 0x14},
	{0x0b, 0x08},
	{0x0c},
	{0x0e},
	{0x0f},
	bytes.Repeat([]byte{0x0b}, 20000),
}

// FuzzConsume: each consume function agrees with protowire's on every
// input, in value and in length (any negative length counts as the same
// refusal).
func FuzzConsume(f *testing.F) {
	for _, s := range consumeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameLen := func(what string, got, want int) {
			t.Helper()
			if got != want && (got >= 0 || want >= 0) {
				t.Fatalf("%s(%x): length %d, protowire %d", what, b, got, want)
			}
		}
		v, n := ConsumeVarint(b)
		wv, wn := protowire.ConsumeVarint(b)
		sameLen("ConsumeVarint", n, wn)
		if n >= 0 && v != wv {
			t.Fatalf("ConsumeVarint(%x) = %d, protowire %d", b, v, wv)
		}
		num, typ, n := ConsumeTag(b)
		wnum, wtyp, wn := protowire.ConsumeTag(b)
		sameLen("ConsumeTag", n, wn)
		if n >= 0 && (int32(num) != int32(wnum) || int8(typ) != int8(wtyp)) {
			t.Fatalf("ConsumeTag(%x) = %d %d, protowire %d %d", b, num, typ, wnum, wtyp)
		}
		if n >= 0 {
			rest := b[n:]
			sameLen("ConsumeFieldValue", ConsumeFieldValue(num, typ, rest), protowire.ConsumeFieldValue(wnum, wtyp, rest))
		}
		bs, n := ConsumeBytes(b)
		wbs, wn := protowire.ConsumeBytes(b)
		sameLen("ConsumeBytes", n, wn)
		if n >= 0 && !bytes.Equal(bs, wbs) {
			t.Fatalf("ConsumeBytes(%x) = %x, protowire %x", b, bs, wbs)
		}
		u32, n := ConsumeFixed32(b)
		wu32, wn := protowire.ConsumeFixed32(b)
		sameLen("ConsumeFixed32", n, wn)
		u64, n2 := ConsumeFixed64(b)
		wu64, wn2 := protowire.ConsumeFixed64(b)
		sameLen("ConsumeFixed64", n2, wn2)
		if (n >= 0 && u32 != wu32) || (n2 >= 0 && u64 != wu64) {
			t.Fatalf("ConsumeFixed(%x) differs from protowire", b)
		}
	})
}

// TestNestedMessagesAreProtowires: messages begun and ended (nested, of
// lengths on both sides of each varint size) are protowire's bytes for
// the same fields.
func TestNestedMessagesAreProtowires(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 70000} {
		payload := bytes.Repeat([]byte{'x'}, n)
		var got []byte
		outer := BeginMessage(&got, 1)
		inner := BeginMessage(&got, 2)
		got = AppendBytes(AppendTag(got, 3, BytesType), payload)
		EndMessage(&got, inner)
		got = AppendVarint(AppendTag(got, 4, VarintType), 7)
		EndMessage(&got, outer)

		in := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), payload)
		mid := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), in)
		mid = protowire.AppendVarint(protowire.AppendTag(mid, 4, protowire.VarintType), 7)
		want := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), mid)
		if !bytes.Equal(got, want) {
			t.Errorf("payload of %d bytes: nested messages differ from protowire's", n)
		}
	}
}
