package policy_test

import (
	"context"
	"fmt"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/policy"
)

func ExampleParse() {
	_, err := policy.Parse("policy.json", []byte(`{
  "version": 1,
  "servers": {"memory": {"deny": ["delete_entities"], "Allow": ["*"]}}
}`))
	fmt.Println(err)
	// Output: policy.json:3:55: servers.memory: unknown key "Allow" (known keys: allow, allow_warn, confirm_destructive, confirm_timeout, connect, deny, limits, local, providers, tools)
}

func ExampleSession() {
	p, _ := policy.Parse("policy.json", []byte(`{"version": 1,
	  "servers": {"memory": {"deny": ["delete_entities"], "confirm_destructive": true}}}`))
	ss := policy.NewChecker(p, policy.Options{}).Session(policy.Server{ID: "20b751c3ec6ffe87", Label: "memory", Transport: policy.Stdio})
	fmt.Println(ss.BeforeConnect(context.Background()).Code)

	del, _ := contract.NewDefinition(contract.Tools, []byte(`{"name":"delete_entities","inputSchema":{"type":"object"}}`))
	listed, _ := ss.Listing(del)
	fmt.Println(listed.Withheld, listed.Reason)

	add, _ := contract.NewDefinition(contract.Tools, []byte(`{"name":"add_observations","inputSchema":{"type":"object","required":["observations"]}}`))
	r := ss.CheckCall(add, []byte(`{"name":"add_observations","arguments":{}}`))
	fmt.Println(r.Reason, r.Pointer, r.Keyword)

	v := ss.BeforeToolCall(context.Background(), add)
	fmt.Println(v.Decision, v.Code)
	v = ss.Confirmed(v, []byte(`{"action":"decline"}`))
	fmt.Println(v.Refusal.Reason)
	// Output:
	// local-pass
	// true denied
	// input-schema /observations required
	// require_confirmation confirm-destructive
	// confirm-declined
}
