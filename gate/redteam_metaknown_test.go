package gate

import (
	"fmt"
	"strings"
	"testing"
)

// rtParse is what parseModernMetaObject returns, as text.
func rtParse(params []byte, cache *metaCache) string {
	mm, po, err := parseModernMetaObject(params, cache)
	var b strings.Builder
	fmt.Fprintf(&b, "err=%v;", err)
	for _, m := range po {
		fmt.Fprintf(&b, "%q=%q;", m.Key, m.Value)
	}
	if mm != nil {
		fmt.Fprintf(&b, "pv=%q caps=%q names=%q info=%q profile=%q", mm.protocolVersion, mm.capabilities, mm.capNames, mm.clientInfo, mm.profile())
	}
	return b.String()
}

func rtNewCache() *metaCache { return &metaCache{byRaw: map[string]*modernMeta{}} }

const rtMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`

func rtGateMetas() []string {
	return []string{
		rtMeta,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"a":{},"a":{}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","IO.modelcontextprotocol/protocolVersion":"x"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"x":"\ud800"}`,
		`{"io.modelcontextprotocol/protocolVersion":1}`,
		`{}`, `{"a":1,"a":1}`, `"s"`, `[]`,
	}
}

var rtGateTemplates = []string{
	`{"_meta":@M@,"name":"echo","arguments":{}}`,
	`{ "_meta" : @M@ ,"name":"echo"}`,
	`{"name":"echo","_meta":@M@}`,
	`{"_meta":@M@,"_meta":@M@}`,
	`{"_meta":@M@,"\u005fmeta":@M@}`,
	`{"\u005fmeta":@M@}`,
	`{"_meta":@M@,"_META":{}}`,
	`{"_meta":@M@,"_Meta":@M@}`,
	`{"_meta":@M@}x`,
	`{"_meta":@M@`,
	`{"_meta":@M@}}`,
	`{"_meta":@M@,}`,
	`{"_meta":@M@:1}`,
	`{"_meta":[@M@]}`,
	`{"_meta":@M@@M@}`,
	`{"_meta":@M@,"name":"e\u0000"}`,
}

func rtGateCases() (cs [][]byte) {
	for _, m := range rtGateMetas() {
		for _, tpl := range rtGateTemplates {
			cs = append(cs, []byte(strings.ReplaceAll(tpl, "@M@", m)))
		}
	}
	return cs
}

// TestRTMetaKnownReadsAsUnknown: after any request, the next is read the
// same with the session's last _meta known as without it, and as with no
// cache at all.
func TestRTMetaKnownReadsAsUnknown(t *testing.T) {
	cs := rtGateCases()
	for _, prior := range cs {
		for _, p := range cs {
			a, b := rtNewCache(), rtNewCache()
			rtParse(prior, a)
			rtParse(prior, b)
			b.last = ""
			got, want := rtParse(p, a), rtParse(p, b)
			if got != want {
				t.Fatalf("after %s: %s read\n%s\nwithout the last _meta\n%s", prior, p, got, want)
			}
			if none := rtParse(p, nil); got != none {
				t.Fatalf("after %s: %s read\n%s\nwithout a cache\n%s", prior, p, got, none)
			}
		}
	}
}

// FuzzRTMetaKnownSpliced: the session's last _meta spliced into the next
// params before any bytes.
func FuzzRTMetaKnownSpliced(f *testing.F) {
	for _, m := range rtGateMetas() {
		f.Add([]byte(`{"_meta":`+m+`}`), []byte(`,"_META":1}`))
		f.Add([]byte(`{"_meta":`+m+`}`), []byte(`}`))
	}
	f.Fuzz(func(t *testing.T, prior, suffix []byte) {
		a, b := rtNewCache(), rtNewCache()
		rtParse(prior, a)
		rtParse(prior, b)
		last := a.last
		b.last = ""
		for _, p := range [][]byte{[]byte(`{"_meta":` + last + string(suffix)), []byte(`{"x":1,"_meta":` + last + string(suffix)), prior} {
			b.last = ""
			if got, want := rtParse(p, a), rtParse(p, b); got != want {
				t.Fatalf("after %q: %q read\n%s\nwithout the last _meta\n%s", prior, p, got, want)
			}
		}
	})
}

// TestMetaCacheKeepsNoLargeMeta: a client that sends a new large _meta
// with every request cannot make the session hold many of them.
func TestMetaCacheKeepsNoLargeMeta(t *testing.T) {
	t.Parallel()
	cache := rtNewCache()
	for i := range 40 {
		params := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x` +
			strings.Repeat("y", maxMetaCached) + fmt.Sprint(i) + `":{}}},"name":"echo"}`)
		mm, _, err := parseModernMetaObject(params, cache)
		if err != nil || mm == nil || mm.protocolVersion != "2026-07-28" {
			t.Fatalf("request %d: %v, %v", i, mm, err)
		}
	}
	if len(cache.byRaw) != 0 || cache.last != "" {
		t.Fatalf("%d large _meta kept", len(cache.byRaw))
	}
	small := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo"}`)
	if _, _, err := parseModernMetaObject(small, cache); err != nil || len(cache.byRaw) != 2 || cache.last == "" {
		t.Fatalf("a small _meta was not kept: %d entries, %v", len(cache.byRaw), err)
	}
}
