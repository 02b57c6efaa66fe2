package canon

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// benchTools is a tools/list listing the size of a very large server:
// 10,000 tool definitions of about 1 KB each, shaped like what MCP SDKs
// send (members in insertion order, so every object needs sorting; JSON
// Schema with nested properties, enums, numbers; annotations; _meta;
// descriptions with newlines, quotes and non-ASCII text).
var benchTools = sync.OnceValue(func() [][]byte { return realisticTools(10_000) })

func realisticTools(n int) [][]byte {
	r := rand.New(rand.NewPCG(42, 42))
	words := strings.Fields(`the a of to and in is for on with by from repository issue pull request
		file path query search list create update delete user project branch commit label state open closed
		results page limit returns optional required string number default maximum minimum format date time
		café naïve über — “quoted” 日本語 données 🚀 access token scope owner name id url`)
	sentence := func(min, max int) string {
		var sb strings.Builder
		for i := range min + r.IntN(max-min+1) {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	quote := func(s string) string {
		return `"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`, "\n", `\n`).Replace(s) + `"`
	}
	tools := make([][]byte, n)
	for i := range tools {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"name":"tool_%05d_%s","title":%s,"description":%s,"inputSchema":{"type":"object","properties":{`,
			i, words[r.IntN(len(words)-10)], quote(sentence(2, 4)), quote(sentence(12, 30)+".\n\n"+sentence(6, 14)+"."))
		props := 2 + r.IntN(4)
		first := ""
		for p := range props {
			if p > 0 {
				b.WriteByte(',')
			}
			prop := fmt.Sprintf("%s_%d", words[r.IntN(len(words))], p)
			if p == 0 {
				first = prop
			}
			b.WriteString(quote(prop) + ":")
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, `{"type":"string","description":%s,"minLength":1,"maxLength":%d}`, quote(sentence(4, 12)), 64+r.IntN(4000))
			case 1:
				fmt.Fprintf(&b, `{"type":"number","description":%s,"minimum":0,"maximum":%d,"default":%g,"multipleOf":0.5}`,
					quote(sentence(4, 10)), 10+r.IntN(1000), float64(r.IntN(100))/4)
			case 2:
				fmt.Fprintf(&b, `{"type":"string","enum":["open","closed","all","draft"],"description":%s,"default":"open"}`, quote(sentence(3, 8)))
			default:
				fmt.Fprintf(&b, `{"type":"array","items":{"type":"object","properties":{"key":{"type":"string"},"value":{"type":["string","number","boolean","null"]}},"required":["key"],"additionalProperties":false},"description":%s,"maxItems":%d}`,
					quote(sentence(3, 8)), 1+r.IntN(50))
			}
		}
		fmt.Fprintf(&b, `},"required":[%s],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},`, quote(first))
		fmt.Fprintf(&b, `"annotations":{"title":%s,"readOnlyHint":%t,"destructiveHint":%t,"idempotentHint":false,"openWorldHint":true},`,
			quote(sentence(2, 3)), r.IntN(2) == 0, r.IntN(4) == 0)
		fmt.Fprintf(&b, `"_meta":{"com.example/version":"1.%d.%d","com.example/weight":%g}}`, r.IntN(20), r.IntN(100), r.Float64())
		tools[i] = b.Bytes()
	}
	return tools
}

func toolBytes(tools [][]byte) int64 {
	var n int64
	for _, t := range tools {
		n += int64(len(t))
	}
	return n
}

// BenchmarkTransform10kTools canonicalizes and hashes every definition of
// a 10,000-tool listing, as contract.NewDefinition does.
func BenchmarkTransform10kTools(b *testing.B) {
	tools := benchTools()
	b.SetBytes(toolBytes(tools))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range tools {
			c, err := Transform(t)
			if err != nil {
				b.Fatal(err)
			}
			_ = sha256.Sum256(c)
		}
	}
}

// BenchmarkDigest10kTools is the same work through Digest, which keeps no
// canonical copy.
func BenchmarkDigest10kTools(b *testing.B) {
	tools := benchTools()
	b.SetBytes(toolBytes(tools))
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range tools {
			if _, err := Digest(t); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestBenchToolsAreRealistic(t *testing.T) {
	t.Parallel()
	tools := realisticTools(200)
	size := toolBytes(tools) / int64(len(tools))
	if size < 700 || size > 1400 {
		t.Errorf("average tool is %d bytes, want about 1 KB", size)
	}
	for _, tool := range tools {
		c, err := Transform(tool)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(c, tool) {
			t.Fatal("tool already canonical: the benchmark would not sort anything")
		}
	}
}
