package policy

import (
	"encoding/json"
	"errors"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// Listed says what the client may see of one verified definition.
type Listed struct {
	// Withheld: leave the definition out of the listing the client
	// receives (and refuse calls to it).
	Withheld bool
	// Reason is ReasonDenied or ReasonNotGranted when Withheld.
	Reason string
	// Definition, when not nil, replaces the server's item in the listing:
	// the definition's RFC 8785 form with "description" set to the host's
	// text (added if the server sent none). Nil means deliver the item as
	// the server sent it.
	Definition []byte
}

// Listing shapes one verified definition for the client. Only tools are
// shaped; every other kind is shown as sent. def must come from the
// verified contract (its Canonical form is what was pinned).
func (sp *ServerPolicy) Listing(def contract.Definition) (Listed, error) {
	if def.Kind != contract.Tools {
		return Listed{}, nil
	}
	tp := sp.Tool(def.Name)
	if tp.Withheld {
		return Listed{Withheld: true, Reason: tp.Reason}, nil
	}
	if tp.Description == nil {
		return Listed{}, nil
	}
	b, err := replaceDescription(def.Canonical, *tp.Description)
	if err != nil {
		return Listed{}, err
	}
	return Listed{Definition: b}, nil
}

var errNotDefinition = errors.New("policy: the definition is not a canonical JSON object")

// replaceDescription returns the canonical form of the object c with its
// "description" member set to desc. Every other member keeps its canonical
// bytes.
func replaceDescription(c []byte, desc string) ([]byte, error) {
	if len(c) == 0 || c[0] != '{' {
		return nil, errNotDefinition
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c, &m); err != nil {
		return nil, errNotDefinition
	}
	d, err := json.Marshal(desc)
	if err != nil {
		return nil, err
	}
	m["description"] = d
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	// encoding/json sorts member names by bytes and escapes <, > and &;
	// canon restores RFC 8785 order and escaping.
	return canon.Transform(raw)
}
