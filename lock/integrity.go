package lock

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// Bounds on the text an approval record holds: a handle, a pull request
// reference. Longer text is not a name.
const (
	maxApprover   = 256
	maxRef        = 256
	maxServerName = 256
)

var (
	// Compiled on first use: run reads a lock only when there is one.
	digestRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
	viaRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })
)

// check verifies everything a lock says about itself, puts every
// definition in canonical form and builds each entry's contract. It
// returns every fault found.
func (l *Lock) check() []Fault {
	var faults []Fault
	if l.Servers == nil {
		return []Fault{{Reason: "no servers member"}}
	}
	for _, name := range l.Names() {
		add := func(where, format string, args ...any) {
			faults = append(faults, Fault{Server: name, Where: where, Reason: fmt.Sprintf(format, args...)})
		}
		if err := CheckServerName(name); err != nil {
			add("", "%v", err)
			continue
		}
		e := l.Servers[name]
		if e == nil {
			add("", "the entry is null")
			continue
		}
		e.checkCommand(add)
		if e.Package != nil {
			if err := e.Package.Validate(); err != nil {
				add("package", "%v", err)
			}
			if e.DefinitionsOnly {
				add("package", "a definitions-only entry pins no package")
			}
		}
		defs := make(map[contract.Kind][]contract.Definition)
		for _, k := range contract.Kinds {
			defs[k] = e.checkDefs(k, add)
		}
		var instr *string
		if in := e.Instructions; in != nil {
			instr = &in.Text
			if !utf8.ValidString(in.Text) {
				add("instructions", "not valid UTF-8")
			} else if want := prefixed(*contract.InstructionsDigest(instr)); in.Digest != want {
				add("instructions", "the digest does not match the text")
			}
			checkApproval(in.Approval, in.Digest, func(r string) { add("instructions", "%s", r) })
		}
		e.contract = contract.New(defs, instr)
		e.checkDigests(add)
	}
	return faults
}

// CheckServerName reports a server name a lock cannot hold: empty, longer
// than 256 bytes, not UTF-8, or holding control characters.
func CheckServerName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty server name")
	case len(name) > maxServerName:
		return fmt.Errorf("server name longer than %d bytes", maxServerName)
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("server name with control characters or invalid UTF-8")
	}
	return nil
}

func (e *Entry) checkCommand(add func(string, string, ...any)) {
	c := e.Command
	if c.Command == "" {
		add("command", "no command")
	}
	if c.Args == nil || c.Env == nil {
		add("command", "args and env must be present")
	}
	for k, v := range c.Env {
		if k == "" || !digestRe().MatchString(v) {
			add("command", "env holds a name without a value digest")
			break
		}
	}
	if c.Digest != c.computeDigest() {
		add("command", "the digest does not match the command")
	}
}

// checkDefs checks the definitions of one kind and returns them as
// contract definitions.
func (e *Entry) checkDefs(k contract.Kind, add func(string, string, ...any)) []contract.Definition {
	list := e.Defs(k)
	if list == nil {
		add(string(k), "missing (an empty kind is [])")
		return nil
	}
	out := make([]contract.Definition, 0, len(list))
	for i, d := range list {
		if d == nil {
			add(string(k), "a null definition")
			continue
		}
		where := string(k) + " " + strconvQuote(d.Name)
		c, err := canon.Transform(d.Definition)
		if err != nil {
			add(where, "the definition is not valid JSON without repeated member names")
			continue
		}
		cd, err := contract.NewDefinition(k, c)
		if err != nil {
			add(where, "not a definition: %s", err.(*contract.DefinitionError).Reason)
			continue
		}
		d.Definition = c
		if cd.Name != d.Name {
			add(where, "the name does not match the definition's %s", k.NameMember())
		}
		if prefixed(cd.Digest) != d.Digest {
			add(where, "the digest does not match the definition")
		}
		if i > 0 && list[i-1] != nil && contract.CompareUTF16(list[i-1].Name, d.Name) >= 0 {
			add(where, "definitions must be sorted by name, each name once")
		}
		checkApproval(d.Approval, d.Digest, func(r string) { add(where, "%s", r) })
		out = append(out, cd)
	}
	return out
}

func (e *Entry) checkDigests(add func(string, string, ...any)) {
	want := e.contract.Digests()
	if e.Digests.Digest != prefixed(want.Contract) {
		add("contract", "the contract digest does not match the definitions")
	}
	if len(e.Digests.Sets) != len(contract.Kinds) {
		add("contract", "the sets must name exactly the four kinds")
		return
	}
	for _, k := range contract.Kinds {
		if e.Digests.Sets[string(k)] != prefixed(want.Sets[k]) {
			add("contract", "the %s set digest does not match the definitions", k)
		}
	}
}

// checkApproval checks an approval record of a definition whose digest is
// digest.
func checkApproval(a *Approval, digest string, add func(string)) {
	if a == nil {
		return
	}
	if a.Digest != digest {
		add("the approval names another digest than the definition's")
	}
	if err := a.Validate(); err != nil {
		add(err.Error())
	}
}

// Validate checks the form of an approval record.
func (a *Approval) Validate() error {
	switch {
	case !digestRe().MatchString(a.Digest):
		return fmt.Errorf("approval digest is not sha256: and 64 hex digits")
	case !printable(a.ApprovedBy, maxApprover):
		return fmt.Errorf("approved_by must be printable text of at most %d bytes", maxApprover)
	case !viaRe().MatchString(a.Via):
		return fmt.Errorf("via must be a lowercase word such as cli or pr")
	case !printable(a.Ref, maxRef):
		return fmt.Errorf("ref must be printable text of at most %d bytes", maxRef)
	}
	t, err := time.Parse(time.RFC3339, a.Time)
	if err != nil || t.UTC().Format(time.RFC3339) != a.Time {
		return fmt.Errorf("approval time must be RFC 3339 in UTC, to the second")
	}
	return nil
}

func printable(s string, max int) bool {
	return len(s) <= max && utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' '
	}) < 0
}

// strconvQuote quotes a server-supplied name for a fault, reduced by
// contract.SafeName so a fault never carries server text.
func strconvQuote(name string) string { return contract.SafeName(name) }
