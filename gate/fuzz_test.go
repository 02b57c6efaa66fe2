package gate_test

import (
	"bytes"

	"github.com/mcpseal/mcpseal/contract"
	"strings"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// FuzzGate feeds the gate a script of frames, each line "c <frame>" (from
// the client) or "s <frame>" (from the server). The gate must never panic,
// and until a contract verifies, the only frames that may reach the server
// are the client's handshake (initialize, server/discover) and the gate's
// own requests and notification.
func FuzzGate(f *testing.F) {
	seeds := []string{
		"c " + initLegacy + "\ns {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}\ns {\"jsonrpc\":\"2.0\",\"id\":\"mcpseal-test-1\",\"result\":{\"tools\":[" + toolWeather + "]}}\nc " + callWeather,
		"c " + modernReq(0, "server/discover", `{}`, "") + "\ns {\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32601,\"message\":\"x\"}}\nc " + initLegacy,
		"c " + modernReq(3, "tools/list", `{}`, "") + "\ns {\"jsonrpc\":\"2.0\",\"id\":\"mcpseal-test-1\",\"result\":{\"capabilities\":{\"tools\":{}}}}\ns {\"jsonrpc\":\"2.0\",\"id\":\"mcpseal-test-2\",\"result\":{\"tools\":[],\"nextCursor\":\"a\"}}",
		"c [" + callWeather + "]\nc " + callWeather + "\ns garbage\ns {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		store := &memPins{}
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		s := gate.New(gate.Config{Identity: pin.IdentityForName("fuzz"), Pins: store, IDPrefix: "mcpseal-test", Now: func() time.Time { return now }})
		for _, line := range strings.Split(script, "\n") {
			if len(line) < 2 {
				continue
			}
			var outs []gate.Out
			switch line[:2] {
			case "c ":
				outs = s.FromClient([]byte(line[2:]))
			case "s ":
				outs = s.FromServer([]byte(line[2:]))
			case "t ":
				now = now.Add(time.Minute)
				outs = s.Tick()
			default:
				continue
			}
			verified := s.Status().Verified
			for _, o := range outs {
				if o.To != gate.ToServer || verified {
					continue
				}
				m, err := jsonrpc.Peek(o.Frame)
				if err != nil {
					t.Fatalf("gate sent the server an invalid frame %q", o.Frame)
				}
				own := bytes.HasPrefix(m.ID, []byte(`"mcpseal-test-`))
				handshake := m.Method == "initialize" || m.Method == "server/discover"
				if !own && !handshake && m.Method != "notifications/initialized" {
					t.Fatalf("before verification the server got %q", o.Frame)
				}
			}
		}
		s.ServerClosed()
	})
}

// memPins is an in-memory pin store for fuzzing: the first contract of each
// profile pins, an equal one matches, any other drifts.
type memPins struct {
	pins map[string]string
}

func (m *memPins) Observe(id pin.Identity, o pin.Observation, c *contract.Contract, posture pin.Posture, now time.Time) (pin.Result, error) {
	if m.pins == nil {
		m.pins = map[string]string{}
	}
	d := c.Digests().Contract
	profile := o.Profile()
	old, ok := m.pins[profile]
	switch {
	case !ok && posture == pin.Strict:
		return pin.Result{Outcome: pin.Drift, AwaitingApproval: true, Changes: contract.Compare(nil, c), Pending: d}, nil
	case !ok:
		m.pins[profile] = d
		return pin.Result{Outcome: pin.FirstPin, Pinned: c}, nil
	case old == d:
		return pin.Result{Outcome: pin.Match, Pinned: c}, nil
	}
	return pin.Result{Outcome: pin.Drift, Pinned: c, Changes: contract.Compare(nil, c), Pending: d}, nil
}
