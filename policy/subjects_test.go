package policy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

const subjectsFile = `{"version": 1,
  "subjects": {
    "analysts": {"groups": ["analysts"]},
    "admins":   {"groups": ["admins"], "scopes": ["mcp:admin"]},
    "ci":       {"client_ids": ["ci-bot"], "issuers": ["https://idp.example"]}
  },
  "defaults": {"tools": {"*": {"subject_calls_per_minute": 100}}},
  "servers": {"memory": {"tools": {
    "read_graph":      {"subjects": ["analysts", "admins", "ci"], "subject_calls_per_minute": 2},
    "delete_entities": {"subjects": ["admins"]}
  }}}}`

func TestSubjectRulesPerCaller(t *testing.T) {
	t.Parallel()
	p, err := Parse("policy.json", []byte(subjectsFile))
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Server(Server{ID: nameID("memory"), IdentityChecked: true})
	analyst := &Who{Subject: "ann", Groups: []string{"analysts"}}
	admin := &Who{Subject: "adm", Groups: []string{"admins"}, Scopes: []string{"mcp:admin"}}
	adminNoScope := &Who{Subject: "adm", Groups: []string{"admins"}}
	ci := &Who{Subject: "svc", ClientID: "ci-bot", Issuer: "https://idp.example"}
	ciOtherIssuer := &Who{Subject: "svc", ClientID: "ci-bot", Issuer: "https://evil.example"}
	for _, tc := range []struct {
		tool string
		who  *Who
		want bool
	}{
		{"read_graph", analyst, true}, {"read_graph", admin, true}, {"read_graph", ci, true},
		{"read_graph", ciOtherIssuer, false}, {"read_graph", nil, false},
		{"delete_entities", analyst, false}, {"delete_entities", admin, true}, {"delete_entities", adminNoScope, false},
		{"create_entities", nil, true}, {"create_entities", analyst, true},
	} {
		tp := sp.Tool(tc.tool)
		if tp.Withheld {
			t.Fatalf("%s withheld at the session level with IdentityChecked", tc.tool)
		}
		if got := tp.Subjects.Allows(tc.who); got != tc.want {
			t.Errorf("%s for %+v: %v, want %v", tc.tool, tc.who, got, tc.want)
		}
	}
	if n := sp.Tool("read_graph").Subjects.CallsPerMinute(); n != 2 {
		t.Errorf("read_graph rate %d, want 2", n)
	}
	if n := sp.Tool("create_entities").Subjects.CallsPerMinute(); n != 100 {
		t.Errorf("create_entities rate %d, want 100 from defaults", n)
	}
}

func TestSubjectRestrictedToolIsWithheldWhenNobodyIsIdentified(t *testing.T) {
	t.Parallel()
	p, err := Parse("policy.json", []byte(subjectsFile))
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Server(Server{ID: nameID("memory")})
	if tp := sp.Tool("delete_entities"); !tp.Withheld || tp.Reason != ReasonSubject {
		t.Fatalf("a subject-restricted tool without identities: %+v", tp)
	}
	if tp := sp.Tool("create_entities"); tp.Withheld {
		t.Fatal("an unrestricted tool was withheld")
	}
}

func TestSubjectSectionErrorsNameNoValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{`{"version": 1, "servers": {"m": {"tools": {"t": {"subjects": ["nobody"]}}}}}`, `servers.m.tools.t.subjects[0]: no subject class "nobody"`},
		{`{"version": 1, "subjects": {"x": {}}}`, "subjects.x: a subject class sets at least one"},
		{`{"version": 1, "subjects": {"x": {"groups": ["s3cr3t", "s3cr3t"]}}}`, "subjects.x.groups[1]"},
		{`{"version": 1, "subjects": {"x": {"group": ["a"]}}}`, `unknown key "group"`},
		{`{"version": 1, "subjects": {"x": {"groups": ["a"], "groups": ["b"]}}}`, "appears twice"},
		{`{"version": 1, "servers": {"m": {"tools": {"t": {"subjects": []}}}}}`, "at least one subject class"},
		{`{"version": 1, "servers": {"m": {"tools": {"t": {"subject_calls_per_minute": 0}}}}}`, "subject_calls_per_minute"},
	} {
		_, err := Parse("policy.json", []byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error names a claim value: %v", err)
		}
	}
}

func TestSubjectRatesSurviveReconnects(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	r := NewSubjectRates(func() time.Time { return now })
	// The key has no session in it: a new session of the same caller
	// draws on the same budget.
	for i := range 3 {
		if !r.Allow("mem\x00iss\x00alice\x00read", 3) {
			t.Fatalf("call %d refused", i)
		}
	}
	if r.Allow("mem\x00iss\x00alice\x00read", 3) {
		t.Fatal("a fourth call within the minute was allowed")
	}
	if !r.Allow("mem\x00iss\x00bob\x00read", 3) {
		t.Fatal("another caller shares alice's budget")
	}
	now = now.Add(20 * time.Second)
	if !r.Allow("mem\x00iss\x00alice\x00read", 3) {
		t.Fatal("the budget did not refill")
	}
}

func TestConfirmSubjectsAskPerCaller(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"version": 1,
	  "subjects": {"ops": {"groups": ["ops"]}},
	  "servers": {"memory": {"tools": {"delete_entities": {"confirm_subjects": ["ops"], "confirm": false}}}}}`)
	def := toolRaw(t, `{"name":"delete_entities","inputSchema":{"type":"object"}}`)
	for _, tc := range []struct {
		who  *Who
		asks bool
	}{{&Who{Subject: "o", Groups: []string{"ops"}}, true}, {&Who{Subject: "e", Groups: []string{"eng"}}, false}, {nil, false}} {
		srv := stdioServer("memory")
		srv.IdentityChecked, srv.Who = true, tc.who
		v := NewChecker(p, Options{}).Session(srv).BeforeToolCall(context.Background(), def)
		if asks := v.Decision == RequireConfirmation; asks != tc.asks || asks && v.Code != CodeConfirmSubject {
			t.Errorf("%+v: %+v, asks want %v", tc.who, v, tc.asks)
		}
	}
}

// TestSubjectsDocExample: the subjects example in docs/policy.md is valid.
func TestSubjectsDocExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Subjects (the team gateway)")
	if !ok {
		t.Fatal("docs/policy.md has no subjects section")
	}
	_, block, ok := strings.Cut(sec, "```json\n")
	if !ok {
		t.Fatal("the subjects section has no example")
	}
	block, _, _ = strings.Cut(block, "```")
	if _, err := Parse("docs/policy.md", []byte(block)); err != nil {
		t.Fatal(err)
	}
}
