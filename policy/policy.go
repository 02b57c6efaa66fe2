// Package policy decides, for every connection, listing and call, whether
// it should happen at all: the host's policy file, JSON Schema enforcement
// of arguments and results, preflight hooks with pluggable decision
// providers and signed receipts, and asking a person.
//
// It owns no transport and sends no MCP message. The session gate calls it
// at fixed points and acts on the answers; everything here is data in,
// data out, plus the providers' own I/O (a local command, an HTTPS
// request), bounded in time and size.
//
// # The host policy
//
// One JSON file, $MCPSEAL_HOME/policy.json or --policy FILE, decoded
// strictly (decode.go: unknown or repeated keys, null, wrong types are
// errors with line, column and key path) and checked (check.go). Per
// server (by name or 16-hex id) and per tool: allow and deny lists, a
// description override, confirm rules, limits, the providers to ask. The
// format is in file.go and docs/policy.md; how settings combine in
// resolve.go. No file means Default: everything the contract check
// allows.
//
// # What the gate asks, and when
//
//	Load / LoadDefault                once, at start     -> *Policy or a *FileError (do not run)
//	NewChecker(p, Options)            once per process   -> *Checker (schema cache, providers)
//	Checker.Session(Server)           once per session   -> *Session (decision cache, rate counts)
//	Session.BeforeConnect(ctx)        before the server starts        -> Verdict
//	Session.AfterConnect(ctx, c)      after the contract verified     -> Verdict
//	Session.Listing(def)              for each tool of each listing   -> Listed (withhold / rewrite)
//	Session.CheckCall(def, params)    for each tools/call             -> *Refusal or nil
//	Session.BeforeToolCall(ctx, def)  then, never with the arguments  -> Verdict
//	Session.ConfirmationParams(v)     when v asks a person            -> elicitation/create params
//	Session.Confirmed(v, result)      with the client's answer        -> Verdict
//	Session.CheckResult(def, result)  for each tools/call result      -> *Refusal or nil
//
// A Verdict either proceeds, asks a person (RequireConfirmation), or
// carries a Refusal. A Refusal is data for the JSON-RPC error: a Kind (which
// error code), a stable Reason, the Stage, mcpseal's own sentence (Why), a
// Hint, and only safe names, digests and codes — never text a server or
// provider wrote. docs/preflight.md has the full table.
//
// # Example
//
//	p, err := policy.LoadDefault(home)
//	if err != nil { return err }                      // never run on a policy that does not load
//	ss := policy.NewChecker(p, policy.Options{}).Session(policy.Server{ID: id.ID, Label: id.Label, Transport: policy.Stdio, Command: argv})
//	if v := ss.BeforeConnect(ctx); v.Refusal != nil { /* answer with v.Refusal; start nothing */ }
//	...
//	if r := ss.CheckCall(def, params); r != nil { /* answer with r; forward nothing */ }
//	switch v := ss.BeforeToolCall(ctx, def); {
//	case v.Refusal != nil:                       // answer with v.Refusal
//	case v.Decision == policy.RequireConfirmation: // ask: ss.ConfirmationParams(v), then ss.Confirmed(v, result)
//	default:                                      // forward the original bytes
//	}
package policy
