package cli

// Red-team pass (round 2) on issue 11's review/approve fixes, through the
// commands a person runs. Each test fails because of a defect, not of the
// test.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

// A person reviews a description change (review --json prints the
// profile's pending contract digest), the server then serves the same
// listing on a downgraded protocol, and the person approves the digest
// they reviewed with --digest, as approve's help says they may. approve
// accepts it (the contract digest of the only pending profile names the
// set), and pins protocol 2024-11-05 for the profile: a downgrade nobody
// was shown. It must refuse, as for any moved pending set.
func TestApproveDigestFlagPinsUnseenProtocolDowngrade(t *testing.T) {
	st := pinHome(t)
	id := pin.IdentityForName("weather")
	o := pin.Observation{ClientVersion: "2025-06-18", Capabilities: []string{"roots"}, Protocol: "2025-06-18"}
	if _, err := st.Observe(id, o, pinsWeather(t, "Get the weather."), pin.Guard, time.Now()); err != nil {
		t.Fatal(err)
	}
	pulled := pinsWeather(t, "Get the weather for a city.")
	if res, err := st.Observe(id, o, pulled, pin.Guard, time.Now()); err != nil || res.Outcome != pin.Drift {
		t.Fatalf("drift: %v %v", res.Outcome, err)
	}
	r := runPins(t, "", "review", id.ID, "--json")
	r.want(t, 0, nil, nil)
	var rv reviewJSON
	if err := json.Unmarshal([]byte(r.stdout), &rv); err != nil || len(rv.Profiles) != 1 {
		t.Fatalf("review --json: %s %v", r.stdout, err)
	}
	reviewed := rv.Profiles[0].Digest

	down := o
	down.Protocol = "2024-11-05"
	if res, err := st.Observe(id, down, pulled, pin.Guard, time.Now()); err != nil || res.Outcome != pin.Drift {
		t.Fatalf("downgrade: %v %v", res.Outcome, err)
	}
	r = runPins(t, "", "approve", id.ID, "--digest", reviewed, "--yes")
	rec, _ := st.Get(id.ID)
	if r.code == 0 {
		t.Fatalf("approve --digest <reviewed contract> after a protocol downgrade succeeded; profile protocol now %q:\n%s",
			*rec.Profiles[0].Protocol, r.stdout)
	}
}

// A new client version's first session drifts (the server answers an old
// protocol and adds a tool); its next session pins the profile on the
// client's version (ProfileAdded). review then shows the pending change
// as it was recorded against no pin: an added tool, no protocol change;
// approving it moves the profile's pinned protocol from 2025-11-25 back to
// 2024-11-05. review must show what approve will change.
func TestReviewHidesProtocolDowngradeOfProfilePinnedMeanwhile(t *testing.T) {
	st := pinHome(t)
	id := pin.IdentityForName("weather")
	weather := pinsWeather(t, "Get the weather.")
	first := pin.Observation{ClientVersion: "2025-06-18", Capabilities: []string{"roots"}, Protocol: "2025-06-18"}
	if _, err := st.Observe(id, first, weather, pin.Guard, time.Now()); err != nil {
		t.Fatal(err)
	}
	extra, err := contract.NewDefinition(contract.Tools, []byte(`{"name":"get_forecast","description":"Get the forecast.","inputSchema":{"type":"object"}}`))
	if err != nil {
		t.Fatal(err)
	}
	more := contract.New(map[contract.Kind][]contract.Definition{contract.Tools: {weather.Defs[contract.Tools][0], extra}}, nil)
	oldProto := pin.Observation{ClientVersion: "2025-11-25", Capabilities: []string{"roots"}, Protocol: "2024-11-05"}
	if res, err := st.Observe(id, oldProto, more, pin.Guard, time.Now()); err != nil || res.Outcome != pin.Drift {
		t.Fatalf("drift: %v %v", res.Outcome, err)
	}
	newProto := oldProto
	newProto.Protocol = "2025-11-25"
	if res, err := st.Observe(id, newProto, weather, pin.Guard, time.Now()); err != nil || res.Outcome != pin.ProfileAdded {
		t.Fatalf("profile added: %v %v", res.Outcome, err)
	}
	r := runPins(t, "", "review", id.ID)
	r.want(t, 0, nil, nil)
	if strings.Contains(r.stdout, "nothing pending") {
		// The change measured against no pin is gone with the pin that
		// came after it: nothing stale is left to approve.
		return
	}
	if !strings.Contains(r.stdout, "protocol") || !strings.Contains(r.stdout, "2024-11-05") {
		runPins(t, "", "approve", id.ID, "--yes").want(t, 0, nil, nil)
		rec, _ := st.Get(id.ID)
		for _, p := range rec.Profiles {
			if p.Key == newProto.Profile() {
				t.Fatalf("review showed no protocol change, and approve then pinned profile %s on %s (it was on 2025-11-25):\n%s", p.Key, *p.Protocol, r.stdout)
			}
		}
	}
}
