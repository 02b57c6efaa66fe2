package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// vectorFile holds the language-neutral vectors; see its "about" member.
var vectorFile = filepath.Join("..", "testdata", "canon", "vectors.json")

type validVector struct {
	Name      string `json:"name"`
	Input     string `json:"input"`
	Canonical string `json:"canonical"`
	SHA256    string `json:"sha256"`
}

type invalidVector struct {
	Name     string `json:"name"`
	Input    string `json:"input"`
	InputHex string `json:"inputHex"`
	Error    string `json:"error"`
}

func (v invalidVector) bytes(t testing.TB) []byte {
	if v.InputHex == "" {
		return []byte(v.Input)
	}
	b, err := hex.DecodeString(v.InputHex)
	if err != nil {
		t.Fatalf("%s: inputHex: %v", v.Name, err)
	}
	return b
}

type numberVector struct {
	Name      string `json:"name"`
	IEEE      string `json:"ieee"`
	Canonical string `json:"canonical"`
	Error     string `json:"error"`
}

func (v numberVector) float(t testing.TB) float64 {
	b, err := hex.DecodeString(v.IEEE)
	if err != nil || len(b) != 8 {
		t.Fatalf("%s: bad ieee %q", v.Name, v.IEEE)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

type vectors struct {
	Valid   []validVector   `json:"valid"`
	Invalid []invalidVector `json:"invalid"`
	Numbers []numberVector  `json:"numbers"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	data, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", vectorFile, err)
	}
	if len(v.Valid) == 0 || len(v.Invalid) == 0 || len(v.Numbers) == 0 {
		t.Fatalf("%s: loaded %d valid, %d invalid, %d number vectors; want some of each",
			vectorFile, len(v.Valid), len(v.Invalid), len(v.Numbers))
	}
	return v
}

var sentinels = map[string]error{
	"invalid":       ErrInvalid,
	"duplicate-key": ErrDuplicateKey,
	"depth":         ErrDepth,
}

func TestValidVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t).Valid {
		got, err := Transform([]byte(v.Input))
		if err != nil {
			t.Errorf("%s: Transform: %v", v.Name, err)
			continue
		}
		if string(got) != v.Canonical {
			t.Errorf("%s:\n got %s\nwant %s", v.Name, got, v.Canonical)
		}
		sum := sha256.Sum256([]byte(v.Canonical))
		if hex.EncodeToString(sum[:]) != v.SHA256 {
			t.Errorf("%s: vector's sha256 is not the SHA-256 of its canonical form", v.Name)
		}
		d, err := Digest([]byte(v.Input))
		if err != nil || d != v.SHA256 {
			t.Errorf("%s: Digest = %s, %v; want %s", v.Name, d, err, v.SHA256)
		}
		again, err := Transform(got)
		if err != nil || !bytes.Equal(again, got) {
			t.Errorf("%s: not idempotent: %s, %v", v.Name, again, err)
		}
	}
}

// errorText is every message an *Error may have: a sentinel, an offset and
// a fixed detail, never input text.
var errorText = regexp.MustCompile(`^canon: (duplicate key at offset \d+|nesting deeper than 512 at offset \d+|invalid JSON at offset \d+(: [a-zA-Z0-9 ',:\\\]}-]+)?)$`)

func TestInvalidVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t).Invalid {
		in := v.bytes(t)
		want, ok := sentinels[v.Error]
		if !ok {
			t.Fatalf("%s: unknown error %q", v.Name, v.Error)
		}
		out, err := Transform(in)
		if err == nil {
			t.Errorf("%s: Transform accepted it: %s", v.Name, out)
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", v.Name, err, want)
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset > len(in) {
			t.Errorf("%s: error %#v is not an *Error with an offset in the input", v.Name, err)
		}
		if !errorText.MatchString(err.Error()) {
			t.Errorf("%s: unexpected error text %q", v.Name, err)
		}
		if _, err := Digest(in); !errors.Is(err, want) {
			t.Errorf("%s: Digest error %v, want %v", v.Name, err, want)
		}
	}
}

func TestNumberVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t).Numbers {
		f := v.float(t)
		if v.Error != "" {
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				t.Errorf("%s: only NaN and the infinities have no JSON form", v.Name)
			}
			continue
		}
		if got := string(appendNumber(nil, f)); got != v.Canonical {
			t.Errorf("%s: appendNumber = %s, want %s", v.Name, got, v.Canonical)
		}
		// Through the parser, from Go's spelling and from the canonical one.
		for _, text := range []string{strconv.FormatFloat(f, 'g', -1, 64), v.Canonical} {
			got, err := Transform([]byte(text))
			if err != nil || string(got) != v.Canonical {
				t.Errorf("%s: Transform(%s) = %s, %v; want %s", v.Name, text, got, err, v.Canonical)
			}
		}
	}
}

func TestNumbersRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := appendNumber(nil, f)
		back, err := strconv.ParseFloat(string(s), 64)
		if err != nil || back != f {
			t.Fatalf("%x: %s parses back as %v, %v", math.Float64bits(f), s, back, err)
		}
		if got, err := Transform(s); err != nil || !bytes.Equal(got, s) {
			t.Fatalf("%x: %s is not canonical: %s, %v", math.Float64bits(f), s, got, err)
		}
	}
}

func TestErrorOffsets(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in     string
		offset int
		err    error
	}{
		{`{"a":1,"a":2}`, 7, ErrDuplicateKey},
		{`{"b":1,"a":2,"b":3}`, 13, ErrDuplicateKey},
		{`[{"x":{"k":1,"k":2}}]`, 13, ErrDuplicateKey},
		{`[1,2,x]`, 5, ErrInvalid},
		{`{"a":1}  x`, 9, ErrInvalid},
		{`"ab\ud800"`, 3, ErrInvalid},
		{"\"ab\xff\"", 3, ErrInvalid},
		{`[1e400]`, 1, ErrInvalid},
		{`"abc`, 0, ErrInvalid},
		{``, 0, ErrInvalid},
		{strings.Repeat("[", MaxDepth+1), MaxDepth, ErrDepth},
	} {
		_, err := Transform([]byte(tt.in))
		var ce *Error
		if !errors.As(err, &ce) || ce.Offset != tt.offset || ce.Err != tt.err {
			t.Errorf("Transform(%.40q) = %v; want %v at offset %d", tt.in, err, tt.err, tt.offset)
		}
	}
}

// TestErrorsNeverEchoInput: input may be hostile (a definition written to
// mislead a reader) or secret, so no error quotes it.
func TestErrorsNeverEchoInput(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-SECRET"
	for _, in := range []string{
		`{"` + secret + `":1,"` + secret + `":2}`,
		`{"a":"` + secret + `\ud800"}`,
		`{"a":"` + secret + "\xff" + `"}`,
		`{"a":` + secret + `}`,
		`"` + secret,
		`[1] ` + secret,
		`{"` + secret + `" 1}`,
		`"` + secret + `\q"`,
	} {
		_, err := Transform([]byte(in))
		if err == nil {
			t.Fatalf("Transform(%q) succeeded", in)
		}
		if strings.Contains(err.Error(), "SECRET") || !errorText.MatchString(err.Error()) {
			t.Errorf("Transform(%q): error %q", in, err)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	ok := strings.Repeat(`{"a":[`, MaxDepth/2) + strings.Repeat(`]}`, MaxDepth/2)
	if _, err := Transform([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	deep := strings.Repeat(`[`, 1_000_000)
	if _, err := Transform([]byte(deep)); !errors.Is(err, ErrDepth) {
		t.Errorf("depth 1e6: %v, want ErrDepth", err)
	}
}

// TestOutputsAreIndependent guards the scratch buffers the package reuses
// between calls: an output must never change under a later call.
func TestOutputsAreIndependent(t *testing.T) {
	t.Parallel()
	a, err := Transform([]byte(`{"b":{"y":2,"x":1},"a":"\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	keep := string(a)
	for range 10 {
		if _, err := Digest([]byte(`{"z":[9,8,7],"q":{"w":"vvvvvvvvvvvvvvvv"}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := Transform([]byte(`["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := Transform([]byte(`{"a":1,"a":2}`)); err == nil {
			t.Fatal("duplicate accepted")
		}
	}
	if string(a) != keep {
		t.Fatalf("output changed to %s", a)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				for _, x := range v.Valid {
					if got, err := Transform([]byte(x.Input)); err != nil || string(got) != x.Canonical {
						t.Errorf("%s: %s, %v", x.Name, got, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// utf16Compare is the definition CompareUTF16 must agree with.
func utf16Compare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "a", -1},
		{"a", "ab", -1},
		{"b", "ab", 1},
		{"A", "a", -1},
		{"\uff61", "\U0001F600", 1}, // UTF-8 order says -1
		{"\U0001F600", "\ufb33", -1},
		{"\ue000", "\U00010000", 1},
		{"\ud7ff", "\U00010000", -1},
		{"\U0001F600", "\U0001F601", -1},
		{"\U0001F300", "\U0001F600", -1},
		{"x\uffff", "x\U0010FFFF", 1},
		{"é", "e\u0301", 1}, // no normalisation
	} {
		if got := CompareUTF16(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := CompareUTF16(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	// Invalid UTF-8: still zero only for equal strings.
	if CompareUTF16("\xff", "\xfe") == 0 || CompareUTF16("a\xc3", "a\xc4") == 0 {
		t.Error("distinct invalid strings compared equal")
	}

	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune{'a', 'b', 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfb33, 0xff61, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	randString := func() string {
		rs := make([]rune, r.IntN(4))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(rs)
	}
	for range 100_000 {
		a, b := randString(), randString()
		if got, want := CompareUTF16(a, b), utf16Compare(a, b); got != want {
			t.Fatalf("CompareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

// TestAgainstSlowCanonicalizer cross-checks Transform on random documents
// against a second, slow canonicalizer built on encoding/json.
func TestAgainstSlowCanonicalizer(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		doc := randomJSON(r, 0)
		got, err := Transform(doc)
		if err != nil {
			t.Fatalf("Transform(%s): %v", doc, err)
		}
		if want := slowCanonical(t, doc); string(got) != want {
			t.Fatalf("Transform(%s)\n got %s\nwant %s", doc, got, want)
		}
	}
}

// randomJSON writes a random JSON value with whitespace, escapes, unsorted
// and look-alike keys, numbers of every shape, and no duplicate names.
func randomJSON(r *rand.Rand, depth int) []byte {
	var b bytes.Buffer
	ws := func() {
		for range r.IntN(2) {
			b.WriteByte(" \t\n\r"[r.IntN(4)])
		}
	}
	var value func(depth int)
	str := func() {
		pieces := []string{"a", "B", "é", "\\u00e9", "\\n", "\\u0001", "\\\"", "\\\\", "\\/", "/", "\U0001F600", "\\ud83d\\ude00",
			"\uff61", "\ue000", "\\uFB33", "\u2028", "\x7f", "\\u0000", " ", "z"}
		b.WriteByte('"')
		for range r.IntN(4) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('"')
	}
	value = func(depth int) {
		ws()
		k := r.IntN(10)
		if depth > 4 && k >= 8 {
			k = r.IntN(8)
		}
		switch k {
		case 0:
			b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
		case 1, 2:
			str()
		case 3, 4:
			nums := []string{"0", "-0", "1", "-1.5", "4.50", "1E30", "1e-7", "0.000001", "123456789012345678901",
				"9007199254740993", "1e21", "1e20", "0.1", "5e-324", "1.7976931348623157e308", "2e-3", "333333333.33333329"}
			if r.IntN(2) == 0 {
				b.WriteString(nums[r.IntN(len(nums))])
			} else {
				b.WriteString(strconv.FormatFloat(math.Float64frombits(r.Uint64()>>2), 'g', -1, 64))
			}
		case 5, 6, 7:
			b.WriteByte('[')
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				value(depth + 1)
			}
			ws()
			b.WriteByte(']')
		default:
			b.WriteByte('{')
			seen := map[string]bool{}
			first := true
			for range r.IntN(6) {
				start := b.Len()
				if !first {
					b.WriteByte(',')
				}
				ws()
				keyStart := b.Len()
				str()
				var key string
				if json.Unmarshal(b.Bytes()[keyStart:], &key) != nil || seen[key] {
					b.Truncate(start)
					continue
				}
				seen[key] = true
				first = false
				ws()
				b.WriteByte(':')
				value(depth + 1)
			}
			ws()
			b.WriteByte('}')
		}
		ws()
	}
	value(depth)
	return b.Bytes()
}

// slowCanonical is an independent canonicalizer: encoding/json to decode,
// sort.Slice with utf16Compare, and hand-written escaping.
func slowCanonical(t *testing.T, doc []byte) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json rejects %s: %v", doc, err)
	}
	var b strings.Builder
	var write func(v any)
	writeString := func(s string) {
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\b':
				b.WriteString(`\b`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\f':
				b.WriteString(`\f`)
			case r == '\r':
				b.WriteString(`\r`)
			case r < 0x20:
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(r)&0xf, 16))
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	}
	write = func(v any) {
		switch v := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case string:
			writeString(v)
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(esNumber(f))
		case []any:
			b.WriteByte('[')
			for i, x := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				write(x)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sortStrings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				writeString(k)
				b.WriteByte(':')
				write(v[k])
			}
			b.WriteByte('}')
		}
	}
	write(v)
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && utf16Compare(s[j-1], s[j]) > 0; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
}

// esNumber is a second, differently built Number::toString: it lays out
// the digits of Go's 'g' format by string manipulation.
func esNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n := x + 1
	switch {
	case len(digits) <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-len(digits))
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	s := sign + digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	if n-1 >= 0 {
		return s + "e+" + strconv.Itoa(n-1)
	}
	return s + "e-" + strconv.Itoa(1-n)
}

func TestInvalidUTF8NeverPasses(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		s := make([]byte, r.IntN(6))
		for i := range s {
			s[i] = byte(r.Uint32())
		}
		in := append(append([]byte{'"'}, bytes.ReplaceAll(bytes.ReplaceAll(s, []byte{'"'}, nil), []byte{'\\'}, nil)...), '"')
		out, err := Transform(in)
		if err == nil && !utf8.Valid(out) {
			t.Fatalf("Transform(%q) = %q: invalid UTF-8 out", in, out)
		}
		if err == nil && !utf8.Valid(in) {
			t.Fatalf("Transform(%q) accepted invalid UTF-8", in)
		}
	}
}

func TestIsCanonical(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":1,"b":[true,"\n"]}`: true,
		`{"b":1,"a":2}`:           false, // order
		`{"a": 1}`:                false, // whitespace
		` {"a":1}`:                false,
		`{"a":1.0}`:               false, // number spelling
		`{"\u0061":1}`:            false, // an escape canonical JSON does not write
		`{"a":"\u000a"}`:          false, // \n is written short
		`{"a":"\u001f"}`:          true,
		`{"a":1,"a":1}`:           false, // repeated name
		`{"a":1`:                  false,
		``:                        false,
	} {
		if got := IsCanonical([]byte(in)); got != want {
			t.Errorf("IsCanonical(%q) = %v, want %v", in, got, want)
		}
	}
}
