package e2e

import (
	"path/filepath"
	"testing"

	"github.com/mcpseal/mcpseal/internal/testmcp"
)

// Red-team pass over issue 11's fixes, end to end.

// TestGatewayDiscoverWithoutModernVersionIsNoDowngrade: session 1 is a
// 2026-07-28 session of the Go SDK client through the gateway. After a
// restart the server still ANSWERS server/discover, but its
// supportedVersions names only 2025-11-25. The go-sdk client (like the
// spec's dual-era client) falls back to initialize exactly as if the
// discover had been refused. The server stopped speaking 2026-07-28 — the
// same downgrade TestGatewayDiscoverRefusalOpensNoProfile blocks — but the
// gateway's route flag only counts discover *errors*, so the fallback
// session is pinned as a free new profile, with no protocol-downgraded
// label. (On stdio the same server leaves the client unable to connect at
// all: the gate refuses its fallback initialize in what it took for a
// modern session, and reports nothing.)
func TestGatewayDiscoverWithoutModernVersionIsNoDowngrade(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	file := filepath.Join(t.TempDir(), "scenario.json")
	sc := testmcp.Scenario{
		Versions: []string{legacyVersion, testmcp.ModernVersion},
		Contract: testmcp.Contract{Tools: []testmcp.RawJSON{honestEcho}},
	}
	writeScenario(t, file, w.scenario(sc))
	routes := scenarioRoute(file, "gw-discover-legacy-only", "")
	g := startGateway(t, w.home, routes)
	cs, names, err := g.connectAndList("")
	if err != nil || len(names) != 1 {
		t.Fatalf("session 1: tools %v, %v", names, err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != testmcp.ModernVersion {
		t.Fatalf("session 1 negotiated %q", v)
	}
	cs.Close()
	g.stop()

	sc.RawDiscoverResult = testmcp.RawJSON(`{"supportedVersions":["2025-11-25"],"ttlMs":0,"cacheScope":"public","capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"1.0.0"}}}`)
	writeScenario(t, file, w.scenario(sc))
	g = startGateway(t, w.home, routes)
	cs, names, err = g.connectAndList("")
	if err == nil {
		t.Fatalf("the server dropped 2026-07-28 from server/discover and the fallback session was not blocked: negotiated %s, tools %v", cs.InitializeResult().ProtocolVersion, names)
	}
	d := wantSDKError(t, err, codeBlocked)
	if !g.stderrShows("protocol-downgraded") {
		wantLabelSomewhere(t, w.home, d.Server.ID, g.stderr.String(), "protocol-downgraded")
	}
}
