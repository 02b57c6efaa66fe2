package tlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// An Observation is what one probe of a server saw.
type Observation struct {
	Server   string
	Package  *Package
	Observed time.Time
	Protocol string
	Contract *contract.Contract
}

// EntryFor returns the entry to append for obs, or nil when the server's
// latest entry already records the same contract: the log records
// changes, not visits. The entry's Since is the previous entry's time.
func (v *Verified) EntryFor(obs Observation) (*Entry, error) {
	return entryAfter(v.Latest(obs.Server), obs, time.Time{})
}

// EntryAfter is EntryFor for a crawler that last saw the server's previous
// contract at lastSeen (zero if unknown): Since is the later of lastSeen
// and the previous entry's time, and never after obs.Observed.
func (v *Verified) EntryAfter(obs Observation, lastSeen time.Time) (*Entry, error) {
	return entryAfter(v.Latest(obs.Server), obs, lastSeen)
}

func entryAfter(latest *Entry, obs Observation, lastSeen time.Time) (*Entry, error) {
	if !ValidServer(obs.Server) {
		return nil, errors.New("tlog: invalid server identity")
	}
	d := obs.Contract.Digests()
	if latest != nil && latest.Digests.Contract == d.Contract {
		return nil, nil
	}
	var since time.Time
	if latest != nil {
		since = latest.Observed
		if lastSeen.After(since) {
			since = lastSeen
		}
		if since.After(obs.Observed) {
			since = obs.Observed
		}
	}
	e := NewEntry(obs.Server, obs.Package, obs.Observed, since, obs.Protocol, obs.Contract)
	if _, err := e.Marshal(); err != nil {
		return nil, err
	}
	return e, nil
}

// ObservationFile is the JSON form of an observation that `mcpseal log
// append` reads: the definitions exactly as the server listed them.
type ObservationFile struct {
	Server            string            `json:"server"`
	Package           *Package          `json:"package"`
	Observed          time.Time         `json:"observed"`
	Protocol          string            `json:"protocol"`
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	Instructions      *string           `json:"instructions"`
}

// MaxObservationFile bounds an observation file: a contract the gate
// would accept fits in a 16 MiB frame.
const MaxObservationFile = 16 << 20

// ParseObservation decodes an observation file. Definitions keep their
// bytes; each must have a digest (contract.Parse).
func ParseObservation(b []byte) (Observation, error) {
	members, err := jsonrpc.Members(b)
	if err != nil {
		return Observation{}, errors.New("the observation is not one JSON object, or repeats a member")
	}
	known := map[string]bool{"server": true, "package": true, "observed": true, "protocol": true,
		"tools": true, "prompts": true, "resources": true, "resourceTemplates": true, "instructions": true}
	for _, m := range members {
		if !known[m.Key] {
			return Observation{}, fmt.Errorf("the observation has an unknown member %q", contract.SafeName(m.Key))
		}
	}
	var f ObservationFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Observation{}, errors.New("the observation does not decode")
	}
	raw := map[contract.Kind][][]byte{}
	for k, defs := range map[contract.Kind][]json.RawMessage{contract.Tools: f.Tools, contract.Prompts: f.Prompts,
		contract.Resources: f.Resources, contract.ResourceTemplates: f.ResourceTemplates} {
		for _, d := range defs {
			raw[k] = append(raw[k], d)
		}
	}
	c, err := contract.Parse(raw, f.Instructions)
	if err != nil {
		return Observation{}, err
	}
	if f.Observed.IsZero() {
		return Observation{}, errors.New("the observation has no observed time")
	}
	return Observation{Server: f.Server, Package: f.Package, Observed: f.Observed, Protocol: f.Protocol, Contract: c}, nil
}
