package policy

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpseal/mcpseal/canon"
)

// rtMetaParams are hostile params for the _meta memo, around a remembered
// _meta M (the placeholder "@M@").
var rtMetaTemplates = []string{
	`{"_meta":@M@,"arguments":{"text":"x"}}`,
	` {  "_meta" :  @M@  , "arguments":{"text":"x"}}`,
	`{"arguments":{"text":"x"},"_meta":@M@}`,
	`{"_meta":@M@}`,                                      // no arguments: required text missing
	`{"_meta":@M@,"_meta":@M@,"arguments":{"text":"x"}}`, // repeated _meta
	`{"_meta":@M@,"_Meta":{},"arguments":{"text":"x"}}`,
	`{"_meta":@M@,"_meta":{},"arguments":{"text":"x"}}`,
	`{"\u005fmeta":@M@,"arguments":{"text":"x"}}`,
	`{"\u005fmeta":@M@,"_meta":@M@,"arguments":{"text":"x"}}`,
	`{"_meta":@M@,"arguments":{"text":"x"}}x`,
	`{"_meta":@M@,"arguments":{"text":"x"}`,
	`{"_meta":@M@`,
	`{"_meta":@M@}}`,
	`{"_meta":@M@,,"arguments":{"text":"x"}}`,
	`{"_meta":@M@ "arguments":{"text":"x"}}`,
	`{"_meta":@M@:1,"arguments":{"text":"x"}}`,
	`{"_meta":@M@],"arguments":{"text":"x"}}`,
	`{"_meta":@M@,"arguments":{"text":"x","_meta":@M@}}`,
	`{"_meta":@M@,"arguments":{"text":@M@}}`,
	`{"_meta":[@M@],"arguments":{"text":"x"}}`,
	`{"x":{"_meta":@M@},"_meta":@M@,"arguments":{"text":"x"}}`,
	`{"_meta":@M@,"ARGUMENTS":{},"arguments":{"text":"x"}}`,
	`{"_meta":@M@,"arguments":{"text":"x","TEXT":"y"}}`,
	`{"_meta":@M@2,"arguments":{"text":"x"}}`,
	`{"a":1,"A":1,"_meta":@M@,"arguments":{"text":"x"}}`, // a fold before _meta
	`{"Arguments":{},"arguments":{"text":"x"},"_meta":@M@}`,
	`{"_meta":@M@@M@,"arguments":{"text":"x"}}`,
	`{"_meta":@M@e5,"arguments":{"text":"x"}}`,
}

// rtMetas are _meta values a first call may leave remembered (or not).
func rtMetas() []string {
	deep := func(k int) string { // one object holding k nested arrays
		return `{"a":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}`
	}
	return []string{
		`{}`, `{ }`, `{"a":1}`, `{"a":1 }`, `{"a":"\u00e9"}`, `{"a":"é"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`,
		`{"a":1,"A":2}`, `{"a":{"b":1,"B":2}}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, `{"a":"\xff"}`,
		`{"a":1e400}`, `{"a":-0}`, `{"a":01}`, `{"k":"\u212a","K":1}`, `{"ſ":1,"s":2}`,
		deep(canon.MaxDepth - 3), deep(canon.MaxDepth - 2), deep(canon.MaxDepth - 1), deep(canon.MaxDepth),
		`{"a":"` + strings.Repeat("x", maxMetaMemo-8) + `"}`, `{"a":"` + strings.Repeat("x", maxMetaMemo-7) + `"}`,
		`{"a":"` + strings.Repeat("x", maxMetaMemo) + `"}`,
		`"s"`, `"sA"`, `1`, `12`, `1.5`, `[]`, `[1]`, `null`, `{`, `{"a":}`,
	}
}

func rtMetaCases() (cases [][]byte) {
	for _, m := range rtMetas() {
		for _, tpl := range rtMetaTemplates {
			cases = append(cases, []byte(strings.ReplaceAll(tpl, "@M@", m)))
		}
	}
	return cases
}

// TestRTMetaMemoEveryPair: every params judged after every other (with
// its _meta remembered) gets a fresh shortcut's verdict, and a true verdict
// is the full path's.
func TestRTMetaMemoEveryPair(t *testing.T) {
	cases := rtMetaCases()
	want := make([]bool, len(cases))
	for i, p := range cases {
		want[i] = compileFlat([]byte(echoSchema)).valid(p)
	}
	memo := compileFlat([]byte(echoSchema))
	for i, prior := range cases {
		for j, p := range cases {
			memo.valid(prior)
			if got := memo.valid(p); got != want[j] {
				t.Fatalf("after %.200s: valid(%.200s) = %v, fresh %v", prior, p, got, want[j])
			}
			_ = i
		}
	}
	// A true verdict is the full path's.
	compiled, err := compileSchema([]byte(echoSchema), schemaKey{digest: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range cases {
		if !want[j] {
			continue
		}
		v, err := decodeArguments(p)
		if err != nil {
			t.Fatalf("shortcut took %.200s, decodeArguments: %v", p, err)
		}
		if err := compiled.Validate(v); err != nil {
			t.Fatalf("shortcut took %.200s, schema: %v", p, err)
		}
	}
}

// TestRTMetaMemoConcurrent: callers sharing one shortcut (the HTTP
// gateway's case), each with its own _meta, get fresh verdicts (run with
// -race).
func TestRTMetaMemoConcurrent(t *testing.T) {
	cases := rtMetaCases()
	want := make([]bool, len(cases))
	for i, p := range cases {
		want[i] = compileFlat([]byte(echoSchema)).valid(p)
	}
	shared := compileFlat([]byte(echoSchema))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 3 * len(cases) {
				j := (n*(2*g+1) + g*7) % len(cases)
				if got := shared.valid(cases[j]); got != want[j] {
					select {
					case errs <- fmt.Sprintf("goroutine %d: valid(%.200s) = %v, fresh %v", g, cases[j], got, want[j]):
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// metaSpan is the raw _meta of params as the strict pass reads it (nil
// when it cannot say).
func metaSpan(params []byte) []byte {
	d := strictDecoder{d: params}
	d.space()
	if d.i >= len(d.d) || d.d[d.i] != '{' {
		return nil
	}
	var span []byte
	_ = d.members(0, func(k []byte) error {
		d.space()
		start := d.i
		if err := d.skip(1); err != nil {
			return err
		}
		if string(k) == "_meta" {
			span = d.d[start:d.i]
		}
		return nil
	})
	return span
}

// FuzzRTMetaMemoSpliced: the remembered _meta, spliced into a params
// before whatever the fuzzer adds, is judged as fresh; and a true verdict
// is the full path's. (FuzzMetaMemoIsTheStrictPass needs the fuzzer to
// send the same _meta twice by chance.)
func FuzzRTMetaMemoSpliced(f *testing.F) {
	for _, m := range rtMetas() {
		f.Add([]byte(`{"_meta":`+m+`,"arguments":{"text":"x"}}`), []byte(` ,"arguments":{"text":"x"}}`), []byte(" "))
		f.Add([]byte(`{"_meta":`+m+`}`), []byte(`}`), []byte(""))
		f.Add([]byte(`{"_meta":`+m+`}`), []byte(`,"_META":1,"arguments":{"text":"x"}}`), []byte("\t"))
	}
	compiled, err := compileSchema([]byte(echoSchema), schemaKey{digest: "rt"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, prior, suffix, pre []byte) {
		memo := compileFlat([]byte(echoSchema))
		memo.valid(prior)
		m := metaSpan(prior)
		if p := memo.meta.Load(); p != nil {
			m = *p
		}
		if m == nil {
			return
		}
		for _, params := range [][]byte{
			append(append([]byte(`{"_meta":`+string(pre)), m...), suffix...),
			append(append([]byte(`{"a":1,"_meta":`+string(pre)), m...), suffix...),
			append(append([]byte(`{"_meta":`), m...), suffix...),
		} {
			got, want := memo.valid(params), compileFlat([]byte(echoSchema)).valid(params)
			if got != want {
				t.Fatalf("after %q: valid(%q) = %v, fresh %v", prior, params, got, want)
			}
			if !got {
				continue
			}
			v, err := decodeArguments(params)
			if err != nil {
				t.Fatalf("shortcut took %q, decodeArguments: %v", params, err)
			}
			if err := compiled.Validate(v); err != nil {
				t.Fatalf("shortcut took %q, schema: %v", params, err)
			}
		}
	})
}

// TestRTMetaMemoDepth: a _meta remembered at the deepest nesting passes
// again; one container more is refused by both.
func TestRTMetaMemoDepth(t *testing.T) {
	for k := canon.MaxDepth - 4; k <= canon.MaxDepth+1; k++ {
		m := `{"a":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}`
		p := []byte(`{"_meta":` + m + `,"arguments":{"text":"x"}}`)
		fresh := compileFlat([]byte(echoSchema)).valid(p)
		memo := compileFlat([]byte(echoSchema))
		first := memo.valid(p)
		remembered := memo.meta.Load() != nil && bytes.Equal(*memo.meta.Load(), []byte(m))
		second := memo.valid(p)
		if first != fresh || second != fresh || remembered != fresh {
			t.Errorf("k=%d: fresh %v, first %v, second %v, remembered %v", k, fresh, first, second, remembered)
		}
		_, err := decodeArguments(p)
		if (err == nil) != fresh {
			t.Errorf("k=%d: shortcut %v, full path %v", k, fresh, err)
		}
	}
}
