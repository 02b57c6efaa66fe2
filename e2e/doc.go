// Package e2e holds mcpseal's end-to-end tests: the real mcpseal binary
// between real peers.
//
//   - sdk_test.go: the official Go SDK client (mcp.NewClient with
//     mcp.CommandTransport) in front of a Go SDK server (sdkserver), over
//     both protocol generations, with drift made by AddTool/RemoveTools
//     and cleared by `mcpseal review` and `mcpseal approve`.
//   - attack_test.go: hostile servers scripted with internal/testmcp,
//     one test per attack (TestRugPullBetweenSessions, TestSplitViewListing...).
//   - attack11_test.go, gateway_attack_test.go: issue 11's attacks (a
//     server choosing the pin profile, one approval per change, ambiguous
//     handshakes and pages, spoofed and defaulted confirmations, client
//     messages that must not crash the gate) through `mcpseal run` and
//     through `mcpseal gateway`, on both protocol generations.
//   - reference_test.go: the official TypeScript SDK client (node/client.mjs)
//     in front of the npm reference servers, pinned by node/package-lock.json.
//     It needs `npm ci --prefix e2e/node` (scripts/test runs it) and fails,
//     never skips, when node_modules is missing.
//   - lock_test.go, policy_test.go, sandbox_test.go, wire_test.go,
//     demo_test.go: the team lock, the host policy and audit log, launch
//     profiles in the Linux sandbox, wrap/unwrap of client configs, and
//     the demo, each through the real binary.
//   - clients_test.go: the real Claude Code, Gemini CLI and Codex
//     (e2e/clients, pinned by its package-lock.json) in a fake home: status
//     counts their extension and plugin servers, wrap, two clean connects
//     through the gate, a refused rug pull as each client shows it, unwrap.
//   - gateway_test.go, runurl_test.go: the HTTP gateway and `run --url`
//     with go-sdk Streamable HTTP servers on loopback.
//   - conformance_test.go: the official MCP conformance suite
//     (e2e/conformance, Node 22 from the npm package node@22) directly and
//     through the gateway; every check passing directly must pass through.
//   - release_test.go: a real release for this platform built with
//     internal/releasebuild (what scripts/release runs): reproducibility
//     (two builds, identical files), the stamped version, the signed
//     SHA256SUMS (mcpseal verify-release, ssh-keygen -Y verify, sha256sum
//     -c; tampered archive, tampered sums, wrong key, a replayed lock
//     signature), the SBOM against go version -m, the container image's
//     layer run, and the npm packages installed offline and run with npx,
//     behind the TypeScript SDK client, with a tampered and a swapped
//     platform package refused.
//   - fleet_test.go: several `mcpseal gateway` replicas on one real
//     PostgreSQL (--state; internal/pgtest starts a throwaway cluster,
//     never a mock, and a missing PostgreSQL fails): first use exactly
//     once, drift and approval propagation, tampered rows, the database
//     down and back, a replica killed mid-pin, one audit chain, sessions
//     across replicas, state import/export.
//   - harness_test.go: the same clients against the same servers without
//     mcpseal, so a failure in the other files points at the proxy and not
//     at the harness.
//
// TestMain builds ./cmd/mcpseal and the two test servers once into a temp
// folder. MCPSEAL_E2E_BIN, when set, names an mcpseal binary to test
// instead of building one (for testing a release build);
// MCPSEAL_E2E_RACE=1 builds the binaries with -race.
package e2e
