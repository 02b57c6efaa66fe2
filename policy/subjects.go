package policy

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// This file holds the policy's subjects: classes of authenticated callers
// of the team gateway (an OAuth access token's sub, groups, roles, scopes,
// client id, issuer) and the tool rules over them.
//
//	"subjects": {
//	  "analysts": {"groups": ["analysts"]},
//	  "admins":   {"groups": ["admins"], "scopes": ["mcp:admin"]}
//	},
//	"servers": {"memory": {"tools": {
//	  "read_graph":      {"subjects": ["analysts", "admins"], "subject_calls_per_minute": 60},
//	  "delete_entities": {"subjects": ["admins"]}
//	}}}
//
// A class matches a caller when every criterion it sets holds: sub is one
// of "sub", one of the caller's groups is in "groups", one of its roles in
// "roles", the token carries every scope of "scopes", its client id is one
// of "client_ids", its issuer one of "issuers". A tool with "subjects" is
// listed to, and may be called by, callers matching one of the classes;
// everyone else neither sees it nor can call it. Where nobody is
// identified (mcpseal run, a gateway without --auth), such a tool is
// withheld. "subjects" and "subject_calls_per_minute" resolve like the
// other tool settings: the tool's entry in the server, the server's "*",
// the tool's entry in defaults, defaults' "*".

// CodeConfirmSubject: a tool entry's "confirm_subjects" names a class the
// session's caller is in.
const CodeConfirmSubject = "confirm-subject"

// ReasonSubject: the tool is restricted to subject classes and the caller
// matches none (or nobody is identified).
const ReasonSubject = "subject"

// Bounds of the subjects section.
const (
	maxSubjectClasses = 256
	maxSubjectValues  = 256
)

// subjectJSON is one class of callers.
type subjectJSON struct {
	Sub       []string `json:"sub,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	Roles     []string `json:"roles,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`
	ClientIDs []string `json:"client_ids,omitempty"`
	Issuers   []string `json:"issuers,omitempty"`
}

type subjectClass struct {
	name                                         string
	sub, groups, roles, scopes, clients, issuers []string
}

// toolWho is one tool entry's subject settings, as written.
type toolWho struct {
	names     []string // nil: not set
	perMinute *int64
	confirm   []string // nil: not set
}

// Who is an authenticated caller, as the policy sees it: values from a
// verified access token.
type Who struct {
	Issuer, Subject, ClientID string
	Scopes, Groups, Roles     []string
}

func (c *subjectClass) matches(w *Who) bool {
	if w == nil {
		return false
	}
	anyOf := func(set, have []string) bool {
		for _, h := range have {
			if slices.Contains(set, h) {
				return true
			}
		}
		return false
	}
	switch {
	case c.sub != nil && !slices.Contains(c.sub, w.Subject),
		c.groups != nil && !anyOf(c.groups, w.Groups),
		c.roles != nil && !anyOf(c.roles, w.Roles),
		c.clients != nil && !slices.Contains(c.clients, w.ClientID),
		c.issuers != nil && !slices.Contains(c.issuers, w.Issuer):
		return false
	}
	for _, s := range c.scopes {
		if !slices.Contains(w.Scopes, s) {
			return false
		}
	}
	return true
}

// SubjectRule is one tool's subject settings, resolved.
type SubjectRule struct {
	classes   []*subjectClass // nil: every caller
	perMinute int64
	confirm   []*subjectClass // callers a person must confirm calls of
}

// Confirms reports whether a person must confirm w's calls of the tool.
func (r SubjectRule) Confirms(w *Who) bool {
	for _, c := range r.confirm {
		if c.matches(w) {
			return true
		}
	}
	return false
}

// Restricted reports whether only some subjects may see and call the tool.
func (r SubjectRule) Restricted() bool { return r.classes != nil }

// Allows reports whether w may see and call the tool.
func (r SubjectRule) Allows(w *Who) bool {
	if r.classes == nil {
		return true
	}
	for _, c := range r.classes {
		if c.matches(w) {
			return true
		}
	}
	return false
}

// CallsPerMinute bounds one caller's calls of the tool (0: no bound).
func (r SubjectRule) CallsPerMinute() int64 { return r.perMinute }

func (sp *ServerPolicy) subjects(places []*toolRules) SubjectRule {
	var r SubjectRule
	names, rateSet, confirmSet := false, false, false
	for _, t := range places {
		if !confirmSet && t.who.confirm != nil {
			confirmSet = true
			for _, n := range t.who.confirm {
				r.confirm = append(r.confirm, sp.policy.subjects[n])
			}
		}
		if !names && t.who.names != nil {
			names = true
			r.classes = []*subjectClass{}
			for _, n := range t.who.names {
				r.classes = append(r.classes, sp.policy.subjects[n])
			}
		}
		if !rateSet && t.who.perMinute != nil {
			rateSet, r.perMinute = true, *t.who.perMinute
		}
	}
	return r
}

// toolWho checks one tool entry's subject settings; the names are checked
// against the subjects section once it is read (subjects).
func (c *checker) toolWho(path string, t *toolJSON) (toolWho, error) {
	var w toolWho
	var err error
	if w.names, err = c.classList(joinPath(path, "subjects"), t.Subjects, "every caller"); err != nil {
		return w, err
	}
	if w.confirm, err = c.classList(joinPath(path, "confirm_subjects"), t.ConfirmSubjects, "none"); err != nil {
		return w, err
	}
	if t.SubjectCallsPerMinute != nil {
		n := *t.SubjectCallsPerMinute
		if n < 1 || n > maxCallsPerMinute {
			return w, c.fail(joinPath(path, "subject_calls_per_minute"), "must be 1 to %d", maxCallsPerMinute)
		}
		w.perMinute = &n
	}
	return w, nil
}

// classList checks a list of subject class names as written (nil: not
// set); unset means unset, never "none".
func (c *checker) classList(at string, names []string, unset string) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	if len(names) == 0 {
		return nil, c.fail(at, "name at least one subject class (leave the key out for %s)", unset)
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, c.fail(fmt.Sprintf("%s[%d]", at, i), "a subject class is listed twice")
		}
	}
	return names, nil
}

// subjects checks the subjects section and every tool entry's references
// to it. Errors name classes and keys, never the values a class matches.
func (c *checker) subjects(in map[string]*subjectJSON, p *Policy) (map[string]*subjectClass, error) {
	if len(in) > maxSubjectClasses {
		return nil, c.fail("subjects", "at most %d subject classes", maxSubjectClasses)
	}
	out := make(map[string]*subjectClass, len(in))
	for _, name := range sortedKeys(in) {
		path := joinPath("subjects", name)
		if !isPlainKey(name) || len(name) > 64 {
			return nil, c.fail(path, "a subject class name is 1 to 64 of A-Z a-z 0-9 _ -")
		}
		s := in[name]
		sc := &subjectClass{name: name}
		for _, f := range []struct {
			key string
			in  []string
			out *[]string
		}{{"sub", s.Sub, &sc.sub}, {"groups", s.Groups, &sc.groups}, {"roles", s.Roles, &sc.roles}, {"scopes", s.Scopes, &sc.scopes}, {"client_ids", s.ClientIDs, &sc.clients}, {"issuers", s.Issuers, &sc.issuers}} {
			if f.in == nil {
				continue
			}
			at := joinPath(path, f.key)
			if len(f.in) == 0 || len(f.in) > maxSubjectValues {
				return nil, c.fail(at, "1 to %d values (leave the key out to match any)", maxSubjectValues)
			}
			for i, v := range f.in {
				if v == "" || len(v) > 1024 || slices.Contains(f.in[:i], v) {
					return nil, c.fail(fmt.Sprintf("%s[%d]", at, i), "empty, longer than 1024 bytes, or repeated")
				}
			}
			*f.out = f.in
		}
		if sc.sub == nil && sc.groups == nil && sc.roles == nil && sc.scopes == nil && sc.clients == nil && sc.issuers == nil {
			return nil, c.fail(path, "a subject class sets at least one of sub, groups, roles, scopes, client_ids, issuers")
		}
		if sc.sub != nil && sc.issuers == nil {
			// A sub is unique only within its issuer (OpenID Connect Core
			// 2): without issuers, "alice" of a partner IdP that auth.json
			// also trusts would be this class's alice.
			return nil, c.fail(path, "a subject class that names sub must name its issuers too: a sub is unique only within its issuer")
		}
		out[name] = sc
	}
	check := func(path string, r *rules) error {
		for _, tool := range sortedKeys(r.tools) {
			w := r.tools[tool].who
			for _, list := range []struct {
				key   string
				names []string
			}{{"subjects", w.names}, {"confirm_subjects", w.confirm}} {
				for i, n := range list.names {
					if out[n] == nil {
						return c.fail(fmt.Sprintf("%s[%d]", joinPath(joinPath(joinPath(path, "tools"), tool), list.key), i), "no subject class %s in \"subjects\"", quoteKey(n))
					}
				}
			}
		}
		return nil
	}
	if err := check("defaults", p.defaults); err != nil {
		return nil, err
	}
	for _, id := range sortedKeys(p.servers) {
		if err := check(joinPath("servers", p.names[id]), p.servers[id]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxSubjectLimiters bounds the per-caller rate state. Beyond it only
// limiters that are full again are dropped (a dropped limiter starts full,
// so dropping one that is not would hand its caller a new budget: a flood
// of made-up tool names would reset a caller's used-up one), and while
// none is, a call that needs a new limiter is refused.
const maxSubjectLimiters = 65536

// SubjectRates counts each caller's calls of each tool across sessions:
// a client that reconnects keeps its count. Safe for concurrent use.
type SubjectRates struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]*subjectLimiter
	// nextEvict: while the state is full and nothing could be dropped,
	// the next look is not before this (a look walks every limiter).
	nextEvict time.Time
}

type subjectLimiter struct {
	l    *rate.Limiter
	used time.Time
}

// NewSubjectRates returns empty rate state; now is the clock (nil: time.Now).
func NewSubjectRates(now func() time.Time) *SubjectRates {
	if now == nil {
		now = time.Now
	}
	return &SubjectRates{now: now, m: make(map[string]*subjectLimiter)}
}

// Allow takes one call of key (server, caller and tool, joined by the
// caller) from a budget of perMinute calls per minute, with bursts of up
// to perMinute.
func (r *SubjectRates) Allow(key string, perMinute int64) bool {
	if perMinute <= 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	sl := r.m[key]
	if sl == nil {
		if len(r.m) >= maxSubjectLimiters && !now.Before(r.nextEvict) {
			r.evict(now)
			r.nextEvict = now.Add(time.Second)
		}
		if len(r.m) >= maxSubjectLimiters {
			return false // fail closed: no budget can be kept for this call
		}
		sl = &subjectLimiter{l: rate.NewLimiter(rate.Limit(float64(perMinute)/60), int(perMinute))}
		r.m[key] = sl
	}
	sl.used = now
	return sl.l.AllowN(now, 1)
}

// evict drops the limiters that are full again: forgetting them changes
// no caller's budget.
func (r *SubjectRates) evict(now time.Time) {
	for k, sl := range r.m {
		if sl.l.TokensAt(now) >= float64(sl.l.Burst()) {
			delete(r.m, k)
		}
	}
}
