package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/tlog"
)

// A server page's data.
type server struct {
	ID       string
	Slug     string
	Versions []*version // oldest first
	Live     *tlog.ServerLiveness
	Badge    BadgeState
}

func (s *server) Latest() *version { return s.Versions[len(s.Versions)-1] }

// Changes counts the server's entries after its first.
func (s *server) Changes() int { return len(s.Versions) - 1 }

// A version is one entry of a server.
type version struct {
	N        int // 1-based within the server
	Index    int // in the log
	Entry    *tlog.Entry
	Contract *contract.Contract
	Counts   map[string]int
	// Changes compare with the previous version (everything added for the
	// first); Diff is their labelled diff for a person, with invisible
	// characters spelled out.
	Changes []change
	Diff    string
	// Window is set when the change was first found after the crawler
	// had been away more than three days: it happened after Since.
	Window bool
}

type change struct {
	Op     string
	Kind   string
	Name   string // contract.VisibleText of the name
	Codes  []string
	Labels []string // details, visible text
}

// slug returns a file name for a server: its identity with every byte
// outside [a-z0-9.-] as "-", then 8 hex of the identity's SHA-256, so
// two identities never share a page.
func slug(id string) string {
	var b strings.Builder
	for i := 0; i < len(id) && b.Len() < 80; i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '-':
			b.WriteByte(c)
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte('-')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "-" + hex.EncodeToString(sum[:4])
}

// buildModel turns the verified log into server pages, loading every
// version's definitions from the log folder.
func buildModel(v *tlog.Verified, st tlog.Storage, live *tlog.Liveness, now time.Time) ([]*server, error) {
	var out []*server
	for _, id := range v.Servers() {
		s := &server{ID: id, Slug: slug(id), Live: live.Servers[id]}
		var prev *contract.Contract
		for n, idx := range v.History(id) {
			e := v.Parsed[idx]
			c, err := tlog.LoadContract(st, e)
			if err != nil {
				return nil, fmt.Errorf("entry %d (%s): %w", idx, id, err)
			}
			ver := &version{N: n + 1, Index: idx, Entry: e, Contract: c, Counts: map[string]int{}}
			for _, k := range contract.Kinds {
				ver.Counts[string(k)] = len(c.Defs[k])
			}
			changes := contract.Compare(prev, c)
			for _, ch := range changes {
				vc := change{Op: string(ch.Op), Kind: ch.Kind.Singular(), Name: contract.VisibleText(ch.Name), Codes: ch.Codes()}
				for _, l := range ch.Labels {
					vc.Labels = append(vc.Labels, contract.VisibleText(l.Detail))
				}
				ver.Changes = append(ver.Changes, vc)
			}
			var diff bytes.Buffer
			if prev != nil {
				if err := contract.RenderDiff(&diff, prev, c, changes); err != nil {
					return nil, err
				}
			}
			ver.Diff = contract.VisibleText(diff.String())
			ver.Window = !e.Since.IsZero() && e.Observed.Sub(e.Since) > staleAfter
			s.Versions = append(s.Versions, ver)
			prev = c
		}
		s.Badge = BadgeFor(s.Latest().Entry, len(s.Versions) == 1, s.Live, now)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := sortKey(out[i].ID), sortKey(out[j].ID)
		return a < b || a == b && out[i].ID < out[j].ID
	})
	return out, nil
}

// sortKey orders servers by name as a person looks for them: without the
// source ("npm:") or a scope's "@", ignoring case.
func sortKey(id string) string {
	_, name, _ := strings.Cut(id, ":")
	return strings.ToLower(strings.TrimLeft(name, "@"))
}
