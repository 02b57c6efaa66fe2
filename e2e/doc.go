// Package e2e holds mcpseal's end-to-end tests: the real mcpseal binary
// between real peers.
//
//   - sdk_test.go: the official Go SDK client (mcp.NewClient with
//     mcp.CommandTransport) in front of a Go SDK server (sdkserver), over
//     both protocol generations, with drift made by AddTool/RemoveTools
//     and cleared by `mcpseal review` and `mcpseal approve`.
//   - attack_test.go: hostile servers scripted with internal/testmcp,
//     one test per attack (TestRugPullBetweenSessions, TestSplitViewListing...).
//   - reference_test.go: the official TypeScript SDK client (node/client.mjs)
//     in front of the npm reference servers, pinned by node/package-lock.json.
//     It needs `npm ci --prefix e2e/node` (scripts/test runs it) and fails,
//     never skips, when node_modules is missing.
//   - harness_test.go: the same clients against the same servers without
//     mcpseal, so a failure in the other files points at the proxy and not
//     at the harness.
//
// TestMain builds ./cmd/mcpseal and the two test servers once into a temp
// folder. MCPSEAL_E2E_BIN, when set, names an mcpseal binary to test
// instead of building one (for testing a release build);
// MCPSEAL_E2E_RACE=1 builds the binaries with -race.
package e2e
