package lock

import (
	"slices"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pkgpin"
)

// Reason says why a definition is withheld. The values are stable: they
// appear in JSON-RPC error data and in lock events.
type Reason string

const (
	// ReasonNew: the lock has no definition of that kind and name.
	ReasonNew Reason = "new"
	// ReasonChanged: the lock has that name with another digest.
	ReasonChanged Reason = "changed"
	// ReasonPending: the lock has exactly that definition, not approved.
	ReasonPending Reason = "pending"
	// ReasonDuplicate: the listing has two definitions of that kind and
	// name; neither is shown, whatever the lock says.
	ReasonDuplicate Reason = "duplicate"
)

// Approved reports whether the definition of kind k called name with
// digest (hex, with or without "sha256:") is approved in the lock, and if
// not, why: new, changed or pending. A listing that holds one name twice
// must be judged with Review, which reports duplicate.
func (e *Entry) Approved(k contract.Kind, name, digest string) (bool, Reason) {
	d, ok := e.Lookup(k, name)
	switch {
	case !ok:
		return false, ReasonNew
	case d.Digest != prefixed(bare(digest)):
		return false, ReasonChanged
	case !d.Approved():
		return false, ReasonPending
	}
	return true, ""
}

// InstructionsApproved reports whether instructions (nil: the server sent
// none) may be shown. None is always fine; otherwise the lock must hold
// exactly these instructions, approved.
func (e *Entry) InstructionsApproved(instructions *string) (bool, Reason) {
	if instructions == nil {
		return true, ""
	}
	in := e.Instructions
	switch {
	case in == nil:
		return false, ReasonNew
	case in.Digest != prefixed(*contract.InstructionsDigest(instructions)):
		return false, ReasonChanged
	case !in.Approved():
		return false, ReasonPending
	}
	return true, ""
}

// Verdict is the judgement of one definition a server listed.
type Verdict struct {
	Kind   contract.Kind
	Name   string
	Digest string // "sha256:..."
	Shown  bool
	Reason Reason // "" when shown
}

// Review judges everything a server listed (c) against the entry. Every
// definition of c gets a verdict, in contract order; definitions that
// share a kind and name are all withheld as duplicate. Instructions gets
// the verdict of the instructions (Kind contract.InstructionsKind).
type Review struct {
	Verdicts     []Verdict
	Instructions Verdict
}

// Review judges c against the entry.
func (e *Entry) Review(c *contract.Contract) Review {
	var r Review
	for _, k := range contract.Kinds {
		defs := c.Defs[k]
		for i, d := range defs {
			v := Verdict{Kind: k, Name: d.Name, Digest: prefixed(d.Digest)}
			dup := i > 0 && defs[i-1].Name == d.Name || i+1 < len(defs) && defs[i+1].Name == d.Name
			if dup {
				v.Reason = ReasonDuplicate
			} else {
				v.Shown, v.Reason = e.Approved(k, d.Name, d.Digest)
			}
			r.Verdicts = append(r.Verdicts, v)
		}
	}
	r.Instructions = Verdict{Kind: contract.InstructionsKind}
	if c.Instructions != nil {
		r.Instructions.Digest = prefixed(*contract.InstructionsDigest(c.Instructions))
	}
	r.Instructions.Shown, r.Instructions.Reason = e.InstructionsApproved(c.Instructions)
	return r
}

// Withheld returns the verdicts of the definitions that are not shown.
func (r Review) Withheld() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if !v.Shown {
			out = append(out, v)
		}
	}
	return out
}

// Shown reports whether the definition of kind k called name with digest
// is shown under this review, and if not, why (new when c did not list
// it at all).
func (r Review) Shown(k contract.Kind, name, digest string) (bool, Reason) {
	for _, v := range r.Verdicts {
		if v.Kind == k && v.Name == name && v.Digest == prefixed(bare(digest)) {
			return v.Shown, v.Reason
		}
	}
	return false, ReasonNew
}

// ApprovedContract returns the part of the lock the model may see: the
// approved definitions and, when approved, the instructions.
func (e *Entry) ApprovedContract() *contract.Contract {
	defs := make(map[contract.Kind][]contract.Definition)
	for _, k := range contract.Kinds {
		for _, d := range e.contract.Defs[k] {
			if ld, ok := e.Lookup(k, d.Name); ok && ld.Approved() {
				defs[k] = append(defs[k], d)
			}
		}
	}
	var instr *string
	if e.Instructions.Approved() {
		instr = e.contract.Instructions
	}
	return contract.New(defs, instr)
}

// LaunchArgv returns the command line that runs exactly the entry's
// locked package: argv (as the client expanded it) with the package spec
// set to the locked version (see pkgpin.Rewrite). It refuses a command
// line that names another package or version, a registry launch the entry
// pins no package for, and anything pkgpin cannot lock. A definitions-only
// entry runs argv as it is.
func (e *Entry) LaunchArgv(argv []string) ([]string, error) {
	if e.DefinitionsOnly {
		return slices.Clone(argv), nil
	}
	return pkgpin.Rewrite(argv, e.Package)
}
