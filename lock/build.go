package lock

import (
	"encoding/json"
	"fmt"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pkgpin"
)

// Observation is what `mcpseal lock` learned about one server: its
// command identity from the config, its package pin from the registry and
// its contract from a probe.
type Observation struct {
	Command         Command
	Package         *pkgpin.Package
	DefinitionsOnly bool
	Contract        *contract.Contract
}

// NewEntry builds the entry for an observation. Approvals of old (the
// server's previous entry, or nil) carry over to every definition whose
// digest is unchanged; every other definition, and changed instructions,
// are pending. The contract must not hold two definitions of one kind
// under one name.
func NewEntry(obs Observation, old *Entry) (*Entry, error) {
	c := obs.Contract
	e := &Entry{Command: obs.Command, Package: obs.Package, DefinitionsOnly: obs.DefinitionsOnly}
	d := c.Digests()
	e.Digests = Digests{Digest: prefixed(d.Contract), Sets: make(map[string]string, len(contract.Kinds))}
	defs := make(map[contract.Kind][]contract.Definition)
	for _, k := range contract.Kinds {
		e.Digests.Sets[string(k)] = prefixed(d.Sets[k])
		list := make([]*Definition, 0, len(c.Defs[k]))
		for i, cd := range c.Defs[k] {
			if i > 0 && c.Defs[k][i-1].Name == cd.Name {
				return nil, fmt.Errorf("the server listed two %ss named %s", k.Singular(), contract.SafeName(cd.Name))
			}
			ld := &Definition{Name: cd.Name, Digest: prefixed(cd.Digest), Definition: json.RawMessage(cd.Canonical)}
			if old != nil {
				if prev, ok := old.Lookup(k, cd.Name); ok && prev.Digest == ld.Digest && prev.Approved() {
					a := *prev.Approval
					ld.Approval = &a
				}
			}
			list = append(list, ld)
		}
		e.setDefs(k, list)
		defs[k] = c.Defs[k]
	}
	if c.Instructions != nil {
		in := &Instructions{Text: *c.Instructions, Digest: prefixed(*d.Instructions)}
		if old != nil && old.Instructions.Approved() && old.Instructions.Digest == in.Digest {
			a := *old.Instructions.Approval
			in.Approval = &a
		}
		e.Instructions = in
	}
	e.contract = contract.New(defs, c.Instructions)
	return e, nil
}

// Pending is one definition (or the instructions) that is not approved.
type Pending struct {
	// Kind is a contract kind, or contract.InstructionsKind.
	Kind   contract.Kind
	Name   string
	Digest string
}

// Pending lists what the entry holds without approval, in contract order.
func (e *Entry) Pending() []Pending {
	var out []Pending
	for _, k := range contract.Kinds {
		for _, d := range e.Defs(k) {
			if !d.Approved() {
				out = append(out, Pending{Kind: k, Name: d.Name, Digest: d.Digest})
			}
		}
	}
	if in := e.Instructions; in != nil && !in.Approved() {
		out = append(out, Pending{Kind: contract.InstructionsKind, Digest: in.Digest})
	}
	return out
}

// Counts returns how many definitions (and instructions) the entry holds
// and how many of them are approved.
func (e *Entry) Counts() (total, approved int) {
	for _, k := range contract.Kinds {
		for _, d := range e.Defs(k) {
			total++
			if d.Approved() {
				approved++
			}
		}
	}
	if e.Instructions != nil {
		total++
		if e.Instructions.Approved() {
			approved++
		}
	}
	return total, approved
}

// Approve records approval a for the definition of kind k called name
// (contract.InstructionsKind for the instructions, name ""). a.Digest
// must be the definition's digest: an approval is for exactly what was
// reviewed.
func (e *Entry) Approve(k contract.Kind, name string, a Approval) error {
	if err := a.Validate(); err != nil {
		return err
	}
	digest, slot, err := e.approvalSlot(k, name)
	if err != nil {
		return err
	}
	if a.Digest != digest {
		return &DigestMismatchError{Have: digest, Given: a.Digest}
	}
	*slot = &a
	return nil
}

// Revoke drops the approval of the definition of kind k called name
// (contract.InstructionsKind for the instructions). It is ErrNotFound
// when there is no such definition or it is not approved.
func (e *Entry) Revoke(k contract.Kind, name string) error {
	_, slot, err := e.approvalSlot(k, name)
	if err != nil {
		return err
	}
	if *slot == nil {
		return fmt.Errorf("%w: it is not approved", ErrNotFound)
	}
	*slot = nil
	return nil
}

func (e *Entry) approvalSlot(k contract.Kind, name string) (string, **Approval, error) {
	if k == contract.InstructionsKind {
		if e.Instructions == nil {
			return "", nil, fmt.Errorf("%w: the server has no instructions in the lock", ErrNotFound)
		}
		return e.Instructions.Digest, &e.Instructions.Approval, nil
	}
	d, ok := e.Lookup(k, name)
	if !ok {
		return "", nil, fmt.Errorf("%w: no %s named %s in the lock", ErrNotFound, k.Singular(), contract.SafeName(name))
	}
	return d.Digest, &d.Approval, nil
}

// DigestMismatchError: an approval named another digest than the locked
// definition's.
type DigestMismatchError struct{ Have, Given string }

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("the locked definition's digest is %s, not %s", e.Have, e.Given)
}

// Set puts entry e under name, replacing any previous entry.
func (l *Lock) Set(name string, e *Entry) { l.Servers[name] = e }
