package policy

import (
	"context"
	"strings"
	"testing"
)

// benchTool is a realistic tool definition: the shape of a code-hosting
// server's create_issue, with nested objects, arrays, enums, patterns,
// bounds and a local $ref, as servers built on zod or pydantic emit.
const benchTool = `{"name":"create_issue","description":"Create a new issue in a repository.",
 "inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
  "properties":{
   "owner":{"type":"string","pattern":"^[A-Za-z0-9-]{1,39}$","description":"Repository owner"},
   "repo":{"type":"string","minLength":1,"maxLength":100},
   "title":{"type":"string","minLength":1,"maxLength":256},
   "body":{"type":"string","maxLength":65536},
   "assignees":{"type":"array","items":{"type":"string"},"maxItems":10,"uniqueItems":true},
   "labels":{"type":"array","items":{"$ref":"#/definitions/label"},"maxItems":20},
   "milestone":{"type":["integer","null"],"minimum":1},
   "type":{"type":"string","enum":["bug","feature","task","question"]},
   "metadata":{"type":"object","properties":{"priority":{"type":"integer","minimum":0,"maximum":4},"estimate":{"type":"number","exclusiveMinimum":0}},"additionalProperties":{"type":"string"}}},
  "required":["owner","repo","title"],
  "definitions":{"label":{"type":"object","properties":{"name":{"type":"string","maxLength":50},"color":{"type":"string","pattern":"^[0-9a-f]{6}$"}},"required":["name"]}}},
 "outputSchema":{"type":"object","properties":{"number":{"type":"integer"},"url":{"type":"string"},"state":{"enum":["open","closed"]}},"required":["number","url","state"]},
 "annotations":{"title":"Create issue","readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}}`

const benchParams = `{"name":"create_issue","arguments":{"owner":"mcpseal","repo":"mcpseal","title":"Audit log rotation keeps the chain",
 "body":"When the current file passes max_file_bytes it is renamed and a new file continues the chain. This issue tracks the verification across files.",
 "assignees":["alice","bob"],"labels":[{"name":"audit","color":"a2eeef"},{"name":"security"}],"milestone":3,"type":"feature",
 "metadata":{"priority":1,"estimate":2.5,"component":"audit"}},"_meta":{"progressToken":7}}`

const benchResult = `{"content":[{"type":"text","text":"{\"number\":42,\"url\":\"https://example.com/mcpseal/mcpseal/issues/42\",\"state\":\"open\"}"}],
 "structuredContent":{"number":42,"url":"https://example.com/mcpseal/mcpseal/issues/42","state":"open"}}`

const benchPolicy = `{"version": 1,
 "defaults": {"confirm_destructive": true, "limits": {"argument_bytes": 1048576, "calls_per_minute": 0}},
 "servers": {"github": {"deny": ["delete_repository"], "allow": ["create_issue", "list_issues", "get_issue"],
   "tools": {"create_issue": {"confirm": false, "limits": {"result_bytes": 1048576}}}}}}`

// BenchmarkCallCheck is the per-call cost of the host policy and schema
// enforcement on a realistic tool: access, limits, rate, argument
// validation (I-JSON check, strict decode, case-fold check, JSON Schema)
// and the before_tool_call hook's built-in decision, with the schema
// compiled once and cached, as in a running session.
func BenchmarkCallCheck(b *testing.B) {
	def := toolRaw(b, benchTool)
	ss := NewChecker(mustParse(b, benchPolicy), Options{}).Session(stdioServer("github"))
	params := []byte(benchParams)
	if r := ss.CheckCall(def, params); r != nil {
		b.Fatal(r)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(params)))
	for b.Loop() {
		if r := ss.CheckCall(def, params); r != nil {
			b.Fatal(r)
		}
		if v, ok := ss.QuickBeforeToolCall(def); !ok || !v.Proceeds() {
			b.Fatal(v)
		}
	}
}

// BenchmarkCallCheckModern is BenchmarkCallCheck with the _meta a
// 2026-07-28 client sends on every request (its version, info and
// capabilities), which the arguments check reads but does not decode.
func BenchmarkCallCheckModern(b *testing.B) {
	def := toolRaw(b, benchTool)
	ss := NewChecker(mustParse(b, benchPolicy), Options{}).Session(stdioServer("github"))
	params := []byte(`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.328"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},` +
		strings.Replace(benchParams[1:], `,"_meta":{"progressToken":7}`, "", 1))
	if r := ss.CheckCall(def, params); r != nil {
		b.Fatal(r)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(params)))
	for b.Loop() {
		if r := ss.CheckCall(def, params); r != nil {
			b.Fatal(r)
		}
	}
}

// BenchmarkResultCheck is the per-result cost: result_bytes and the
// pinned outputSchema on structuredContent.
func BenchmarkResultCheck(b *testing.B) {
	def := toolRaw(b, benchTool)
	ss := NewChecker(mustParse(b, benchPolicy), Options{}).Session(stdioServer("github"))
	result := []byte(benchResult)
	b.ReportAllocs()
	b.SetBytes(int64(len(result)))
	for b.Loop() {
		if r := ss.CheckResult(def, result); r != nil {
			b.Fatal(r)
		}
	}
}

// BenchmarkBeforeToolCallHook is the hook alone with confirm_destructive
// reading the pinned annotations (no providers).
func BenchmarkBeforeToolCallHook(b *testing.B) {
	def := toolRaw(b, benchTool)
	ss := NewChecker(mustParse(b, `{"version": 1, "defaults": {"confirm_destructive": true}}`), Options{}).Session(stdioServer("github"))
	b.ReportAllocs()
	for b.Loop() {
		ss.BeforeToolCall(context.Background(), def)
	}
}

// The benchmark's (internal/benchtool) echo tool, and a 2026-07-28 call
// of it with the _meta such a client sends on every request.
const (
	echoTool   = `{"name":"echo","description":"Repeats the text it is given.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"Text to repeat"}},"required":["text"]}}`
	echoParams = `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpseal-bench","version":"v1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"hello"},"name":"echo"}`
	echoResult = `{"content":[{"type":"text","text":"hello"}]}`
)

// BenchmarkCallCheckEcho is the call gate's cost for the benchmark's echo
// call under the built-in policy: what `mcpseal run` spends on the call's
// path before forwarding it (argument validation, the hook's decision).
func BenchmarkCallCheckEcho(b *testing.B) {
	def := toolRaw(b, echoTool)
	ss := NewChecker(Default(), Options{}).Session(stdioServer("bench"))
	params := []byte(echoParams)
	if r := ss.CheckCall(def, params); r != nil {
		b.Fatal(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := ss.CheckCall(def, params); r != nil {
			b.Fatal(r)
		}
		if v, ok := ss.QuickBeforeToolCall(def); !ok || !v.Proceeds() {
			b.Fatal(v)
		}
	}
}

// BenchmarkResultCheckEcho is the same for the echo call's result.
func BenchmarkResultCheckEcho(b *testing.B) {
	def := toolRaw(b, echoTool)
	ss := NewChecker(Default(), Options{}).Session(stdioServer("bench"))
	result := []byte(echoResult)
	b.ReportAllocs()
	for b.Loop() {
		if r := ss.CheckResult(def, result); r != nil {
			b.Fatal(r)
		}
	}
}
