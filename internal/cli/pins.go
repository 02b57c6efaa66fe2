package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
)

// This file holds what the pin store commands (list, show, review,
// approve, forget, verify) share: opening the store, turning its errors
// into messages with hints, confirmation, and the --json output types.

// openStore opens the pin store under the home folder the environment
// names ($MCPSEAL_HOME, else ~/.mcpseal).
func openStore(e *env) (*pin.Store, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return nil, withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	st, err := pin.Open(home)
	if err != nil {
		return nil, fmt.Errorf("opening the pin store: %w", err)
	}
	return st, nil
}

// storeError adds a hint to the errors the store returns for a server the
// user named.
func storeError(err error) error {
	var te *pin.TamperError
	switch {
	case errors.As(err, &te) && te.ID == "":
		return withHint(err, "run 'mcpseal verify' to see every fault; if the event log is damaged, removing the pins folder starts over (every server then pins afresh)")
	case errors.As(err, &te):
		return withHint(err, "run 'mcpseal verify' to see every fault; 'mcpseal forget %s' deliberately re-trusts whatever the server serves next", te.ID)
	case errors.Is(err, pin.ErrNotFound):
		return withHint(err, "run 'mcpseal list' to see the pinned servers")
	}
	return err
}

// isTerminal reports whether r is an interactive terminal. Tests replace it.
var isTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// maxAnswer bounds the line read from a person at a confirmation prompt.
const maxAnswer = 1024

// confirm asks question on stderr and reads a yes on stdin, unless yes is
// set. Without a terminal on stdin there is no one to ask: it refuses.
func confirm(e *env, yes bool, question string) error {
	if yes {
		return nil
	}
	if !isTerminal(e.stdin) {
		return exitWith(ExitFailure, withHint(errors.New("this needs confirmation and stdin is not a terminal; nothing was changed"),
			"pass --yes to confirm without a prompt"))
	}
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(io.LimitReader(e.stdin, maxAnswer)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return exitWith(ExitFailure, errors.New("not confirmed; nothing was changed"))
}

// oneLine shows server-supplied text on one terminal line, with every
// invisible or unusual character, newline and tab spelled out.
func oneLine(s string) string {
	s = contract.VisibleText(s)
	return strings.NewReplacer("\n", `\u{000a}`, "\t", `\u{0009}`).Replace(s)
}

// humanTime formats a time for a terminal; "never" when zero.
func humanTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// jsonVersion is the version of every --json output of the pin store
// commands. Fields are only ever added within a version.
const jsonVersion = 1

// A server's state in the --json output of list, show and review.
const (
	// stateOK: a contract is pinned and nothing is pending.
	stateOK = "ok"
	// stateDriftPending: a contract is pinned and a change waits for
	// review.
	stateDriftPending = "drift-pending"
	// stateAwaitingApproval: nothing is pinned yet; the first contract the
	// server showed (under strict) waits for review and approval.
	stateAwaitingApproval = "awaiting-approval"
	// stateTampered: the server's pin fails its integrity check (list).
	stateTampered = "tampered"
)

// recordState returns the state of an intact record.
func recordState(rec *pin.Record) string {
	switch {
	case rec.AwaitingApproval():
		return stateAwaitingApproval
	case len(rec.Pending) > 0:
		return stateDriftPending
	}
	return stateOK
}

// listJSON is the output of list --json.
type listJSON struct {
	Version int           `json:"version"`
	Servers []summaryJSON `json:"servers"`
}

type summaryJSON struct {
	ID string `json:"id"`
	// State is one of the state constants.
	State    string     `json:"state"`
	Label    string     `json:"label,omitempty"`
	Created  *time.Time `json:"created,omitempty"`
	Updated  *time.Time `json:"updated,omitempty"`
	LastSeen *time.Time `json:"lastSeen,omitempty"`
	Profiles int        `json:"profiles"`
	// Definitions counts distinct (kind, name) pairs across profiles.
	Definitions int `json:"definitions"`
	// DriftPending is also true when State is awaiting-approval.
	DriftPending bool `json:"driftPending"`
	// Pending is the contract digest of the first pending profile (by
	// key), as in earlier releases.
	Pending string `json:"pending,omitempty"`
	// PendingDigest is the review-set digest of every pending profile's
	// change: what review marks and approve --digest takes.
	PendingDigest   string `json:"pendingDigest,omitempty"`
	PendingProfiles int    `json:"pendingProfiles,omitempty"`
	// Tampered is why the server's pin cannot be trusted; the server's
	// other fields are then absent.
	Tampered string `json:"tampered,omitempty"`
}

// showJSON is the output of show --json.
type showJSON struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Label   string `json:"label"`
	// State is ok, drift-pending or awaiting-approval (Profiles is then
	// empty).
	State    string        `json:"state"`
	Created  time.Time     `json:"created"`
	Updated  time.Time     `json:"updated"`
	LastSeen *time.Time    `json:"lastSeen,omitempty"`
	Profiles []profileJSON `json:"profiles"`
	// Pending is the first pending profile's change (by key), null when
	// nothing is pending; PendingProfiles lists every one, PendingDigest
	// names them as one set (the review-set digest, see docs/pin-store.md).
	Pending         *pendingJSON    `json:"pending"`
	PendingProfiles []pendingJSON   `json:"pendingProfiles"`
	PendingDigest   string          `json:"pendingDigest,omitempty"`
	Reviewed        *reviewMarkJSON `json:"reviewed"`
}

type profileJSON struct {
	Key    string    `json:"key"`
	Pinned time.Time `json:"pinned"`
	// Protocol is the version the server agreed to, null when an earlier
	// release pinned the profile and no session has shown it since.
	Protocol *string `json:"protocol"`
	// Fallback: a person approved this profile's sessions in which the
	// server refused server/discover after speaking 2026-07-28.
	Fallback bool `json:"fallback,omitempty"`
	contractJSON
}

// contractJSON lists a contract's digests: the whole contract, each set,
// the instructions and every definition by kind.
type contractJSON struct {
	Contract     string                             `json:"contract"`
	Sets         map[contract.Kind]string           `json:"sets"`
	Instructions *string                            `json:"instructions"`
	Definitions  map[contract.Kind][]definitionJSON `json:"definitions"`
}

type definitionJSON struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

type pendingJSON struct {
	Profile  string    `json:"profile"`
	Detected time.Time `json:"detected"`
	// Reviewed reports whether the whole pending set is marked reviewed.
	Reviewed bool    `json:"reviewed"`
	Protocol *string `json:"protocol"`
	Fallback bool    `json:"fallback,omitempty"`
	contractJSON
}

// reviewMarkJSON is the last review mark. Digest is the review-set digest
// of the set it covered; Profile, kept from earlier releases, is the
// profile key when that set is the current one and holds one profile, else
// "".
type reviewMarkJSON struct {
	Profile string    `json:"profile"`
	Digest  string    `json:"digest"`
	Time    time.Time `json:"time"`
}

func contractDigests(c *contract.Contract) contractJSON {
	d := c.Digests()
	out := contractJSON{Contract: d.Contract, Sets: d.Sets, Instructions: d.Instructions, Definitions: map[contract.Kind][]definitionJSON{}}
	for _, k := range contract.Kinds {
		defs := []definitionJSON{}
		for _, def := range c.Defs[k] {
			defs = append(defs, definitionJSON{Name: def.Name, Digest: def.Digest})
		}
		out.Definitions[k] = defs
	}
	return out
}

// reviewJSON is the output of review --json.
type reviewJSON struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Label   string `json:"label"`
	// State is ok (nothing pending), drift-pending or awaiting-approval
	// (the pending change is the first contract, compared with the empty
	// contract: every definition is added).
	State string `json:"state"`
	// Pending is the first pending profile's change (by key), null when
	// nothing is pending: what earlier releases showed.
	Pending *reviewPendingJSON `json:"pending"`
	// Profiles lists every pending profile's change; review marks them
	// reviewed together and approve pins them together.
	Profiles []reviewPendingJSON `json:"profiles"`
	// Digest is the review-set digest of Profiles (see docs/pin-store.md):
	// what approve --digest takes. "" when nothing is pending.
	Digest string `json:"digest,omitempty"`
	// Identical reports that every pending profile shows the same changes.
	Identical bool `json:"identical"`
	// Approve is the command that pins the reviewed changes.
	Approve string `json:"approve,omitempty"`
}

type reviewPendingJSON struct {
	Profile  string    `json:"profile"`
	Detected time.Time `json:"detected"`
	// Digest is the pending contract's digest. With one pending profile,
	// approve --digest takes it too.
	Digest string `json:"digest"`
	// Base is the digest of the contract the pending one was compared with.
	Base string `json:"base"`
	// Protocol is the version the pending session ran on (null when an
	// earlier release recorded the change); approving pins it.
	Protocol *string           `json:"protocol"`
	Fallback bool              `json:"fallback,omitempty"`
	Changes  []contract.Change `json:"changes"`
}

// verifyJSON is the output of verify --json.
type verifyJSON struct {
	Version int         `json:"version"`
	OK      bool        `json:"ok"`
	Events  int64       `json:"events"`
	Servers int         `json:"servers"`
	Faults  []faultJSON `json:"faults"`
	Notes   []string    `json:"notes"`
}

type faultJSON struct {
	// ID is the server's id, "" for the store as a whole.
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
