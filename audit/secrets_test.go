package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/policy"
)

// Secret markers: each stands for content the audit log must never hold.
var markers = []string{
	"SECRET-MARKER-ARGUMENT-VALUE",
	"SECRET-MARKER-ARGUMENT-KEY",
	"SECRET-MARKER-RESULT",
	"SECRET-MARKER-DESCRIPTION",
	"SECRET-MARKER-ENV",
	"SECRET-MARKER-ARGV",
	"SECRET-MARKER-URL",
}

// eventFor is how a gate turns a verdict or refusal into an event: codes,
// names, digests and sizes, never the refusal's text or pointer.
func eventFor(op Op, outcome Outcome, s policy.Server, def *contract.Definition, v policy.Verdict, r *policy.Refusal, size int) Event {
	e := Event{Op: op, Outcome: outcome, Server: s.ID, Label: s.Label, Stage: string(v.Stage), Code: v.Code, Provider: v.Provider, Bytes: int64(size)}
	if v.Receipt != nil {
		e.Receipt = v.Receipt.SHA256
	}
	if r != nil {
		e.Code, e.Stage, e.Provider = r.Reason, string(r.Stage), r.Provider
	}
	if def != nil {
		e.Tool, e.Digest = def.Name, def.Digest
	}
	return e
}

// TestAuditLogHoldsNoSecrets drives the policy with secrets in arguments
// (values and keys), results, descriptions, the environment, argv and the
// URL, records every decision as a gate would, and searches the whole
// audit folder for them.
func TestAuditLogHoldsNoSecrets(t *testing.T) {
	t.Parallel()
	l, home := openTest(t, Options{MaxFileBytes: 2048})
	p, err := policy.Parse("policy.json", []byte(`{"version": 1,
	  "defaults": {"confirm_destructive": true, "limits": {"result_bytes": 4096}},
	  "servers": {"memory": {"deny": ["drop"], "tools": {"search": {"description": "Search."}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOKEN": "SECRET-MARKER-ENV"}
	c := policy.NewChecker(p, policy.Options{Getenv: func(k string) string { return env[k] }})
	srv := policy.Server{ID: "20b751c3ec6ffe87", Label: "memory", Transport: policy.Stdio,
		Command: []string{"/usr/bin/server", "--token=SECRET-MARKER-ARGV", "https://x.example/SECRET-MARKER-URL"}}
	ss := c.Session(srv)
	v := ss.BeforeConnect(context.Background())
	must(t, l.Append(eventFor(OpConnect, Allowed, srv, nil, v, v.Refusal, 0)))

	def, err := contract.NewDefinition(contract.Tools, []byte(`{"name":"search","description":"SECRET-MARKER-DESCRIPTION",
	  "inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":5}},"additionalProperties":false},
	  "outputSchema":{"type":"object","properties":{"hits":{"type":"integer"}}},"annotations":{"readOnlyHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	drop, _ := contract.NewDefinition(contract.Tools, []byte(`{"name":"drop","description":"SECRET-MARKER-DESCRIPTION"}`))
	if shown, _ := ss.Listing(drop); shown.Withheld {
		must(t, l.Append(eventFor(OpWithhold, Withheld, srv, &drop, policy.Verdict{Code: shown.Reason}, nil, 0)))
	} else {
		t.Error("a denied tool was listed")
	}
	for _, params := range []string{
		`{"name":"search","arguments":{"q":"SECRET-MARKER-ARGUMENT-VALUE"}}`,
		`{"name":"search","arguments":{"SECRET-MARKER-ARGUMENT-KEY":"x"}}`,
		`{"name":"search","arguments":{"q":"ok"}}`,
	} {
		if r := ss.CheckCall(def, []byte(params)); r != nil {
			must(t, l.Append(eventFor(OpCall, Refused, srv, &def, policy.Verdict{}, r, len(params))))
			continue
		}
		v := ss.BeforeToolCall(context.Background(), def)
		must(t, l.Append(eventFor(OpCall, Allowed, srv, &def, v, v.Refusal, len(params))))
	}
	for _, result := range []string{
		`{"content":[{"type":"text","text":"SECRET-MARKER-RESULT"}],"structuredContent":{"hits":"SECRET-MARKER-RESULT"}}`,
		`{"content":[{"type":"text","text":"SECRET-MARKER-RESULT"}],"structuredContent":{"hits":3}}`,
	} {
		outcome := Allowed
		r := ss.CheckResult(def, []byte(result))
		if r != nil {
			outcome = Withheld
			data, _ := json.Marshal(r)
			if strings.Contains(string(data), "SECRET-MARKER") {
				t.Errorf("the refusal the client gets echoes the result: %s", data)
			}
		}
		must(t, l.Append(eventFor(OpCall, outcome, srv, &def, policy.Verdict{}, r, len(result))))
	}
	cv := ss.BeforeToolCall(context.Background(), drop)
	must(t, l.Append(eventFor(OpCall, Refused, srv, &drop, cv, cv.Refusal, 0)))

	entries, err := os.ReadDir(Dir(home))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(Dir(home), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		total += len(data)
		for _, m := range markers {
			if strings.Contains(string(data), m) {
				t.Errorf("%s holds %s", e.Name(), m)
			}
		}
	}
	if rep := mustVerify(t, home); !rep.OK() || rep.Events < 7 || total == 0 {
		t.Errorf("%+v\n%s", rep, faultText(rep))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
