package policy

import (
	"sync"
	"time"
)

// This file resolves the settings that apply to one server and one tool.
//
// A setting is taken from the most specific place that sets it, in this
// order: the tool's entry in the server's "tools", the server's "*" tool
// entry, the server entry itself, then the same three places in
// "defaults", then mcpseal's built-in default. Two settings accumulate
// instead: "deny" (a tool denied anywhere is denied) and, for "allow", the
// server's list replaces the defaults' list. "confirm" exists only on tool
// entries; when no tool entry sets it, confirm_destructive decides.

// rules is one checked server entry, or "defaults".
type rules struct {
	connect            string
	local              string
	allow              map[string]bool // nil: not set
	deny               map[string]bool
	confirmDestructive *bool
	allowWarn          *bool
	providers          []string // nil: not set
	confirmTimeout     *time.Duration
	limits             limitSet
	tools              map[string]*toolRules
}

type toolRules struct {
	description *string
	confirm     *bool
	limits      limitSet
	who         toolWho
}

type limitSet struct {
	argumentBytes  *int64
	resultBytes    *int64
	callsPerMinute *int64
	callTimeout    *time.Duration
}

// Limits bound one tool's calls.
type Limits struct {
	// ArgumentBytes bounds the raw "arguments" member of a tools/call.
	ArgumentBytes int64
	// ResultBytes bounds the raw result of a tools/call.
	ResultBytes int64
	// CallsPerMinute bounds the calls of one tool in any 60 seconds of a
	// session; 0 means no bound.
	CallsPerMinute int64
	// CallTimeout is how long the gate waits for a call's result before it
	// answers the client with an error and drops the late result.
	CallTimeout time.Duration
}

// DefaultLimits apply where the policy sets none: 4 MiB of arguments is
// far more than a model writes, 16 MiB of result is the default frame
// limit, calls are not rate limited, and a call may run ten minutes.
var DefaultLimits = Limits{ArgumentBytes: 4 << 20, ResultBytes: 16 << 20, CallsPerMinute: 0, CallTimeout: 10 * time.Minute}

// DefaultConfirmTimeout is how long a person has to answer a confirmation.
const DefaultConfirmTimeout = 2 * time.Minute

// Transport is how mcpseal reaches a server.
type Transport string

const (
	// Stdio: a local child process. It has no host.
	Stdio Transport = "stdio"
	// HTTP: a remote Streamable HTTP endpoint.
	HTTP Transport = "http"
)

// Server is what the gate knows of a server before it connects.
type Server struct {
	// ID is the 16-hex server id (pin.Identity.ID).
	ID string
	// Label is the safe label (pin.Identity.Label).
	Label string
	// Transport is Stdio or HTTP. Anything but Stdio is treated as a
	// remote server: before_connect asks its providers.
	Transport Transport
	// Command is a stdio server's argv. It may hold tokens: it is shown
	// only to command providers (local programs the host configured) and
	// never logged or sent over the network.
	Command []string
	// URL is an HTTP server's endpoint. Only its origin leaves the machine
	// (to an http provider); path and query may hold tokens.
	URL string
	// IdentityChecked: every caller is authenticated and the front door
	// applies the tools' subject rules per caller (the team gateway). Without
	// it nobody is identified, so a tool restricted to subjects is withheld.
	IdentityChecked bool
	// Who is the session's one authenticated caller (a team gateway's
	// legacy session), for "confirm_subjects"; nil when there is none.
	Who *Who
}

// ServerPolicy is the policy resolved for one server.
type ServerPolicy struct {
	policy *Policy
	server Server
	levels []*rules // the server's entry when there is one, then defaults
	// tools remembers what Tool resolved, by name, up to maxResolvedTools:
	// a call asks for its tool's policy three or four times (the call's
	// check, the hook, the result's check), and nothing it reads changes.
	mu    sync.Mutex
	tools map[string]ToolPolicy
}

// maxResolvedTools bounds ServerPolicy.tools: the tools a session calls,
// not every name of a large listing (shaped once, each name once).
const maxResolvedTools = 256

// Server resolves the policy for s.
func (p *Policy) Server(s Server) *ServerPolicy {
	sp := &ServerPolicy{policy: p, server: s}
	if r := p.servers[s.ID]; r != nil {
		sp.levels = append(sp.levels, r)
	}
	sp.levels = append(sp.levels, p.defaults)
	return sp
}

// Listed reports whether the policy file has an entry for the server.
func (sp *ServerPolicy) Listed() bool { return len(sp.levels) > 1 }

func (sp *ServerPolicy) connect() string {
	for _, r := range sp.levels {
		if r.connect != "" {
			return r.connect
		}
	}
	return connectAllow
}

func (sp *ServerPolicy) local() string {
	for _, r := range sp.levels {
		if r.local != "" {
			return r.local
		}
	}
	return localPass
}

// AllowWarn reports whether a warn decision proceeds (allow_warn).
func (sp *ServerPolicy) AllowWarn() bool {
	for _, r := range sp.levels {
		if r.allowWarn != nil {
			return *r.allowWarn
		}
	}
	return false
}

// ConfirmTimeout is how long the gate waits for a person's answer.
func (sp *ServerPolicy) ConfirmTimeout() time.Duration {
	for _, r := range sp.levels {
		if r.confirmTimeout != nil {
			return *r.confirmTimeout
		}
	}
	return DefaultConfirmTimeout
}

// providerNames lists the external providers consulted for this server.
func (sp *ServerPolicy) providerNames() []string {
	for _, r := range sp.levels {
		if r.providers != nil {
			return r.providers
		}
	}
	return nil
}

// ToolPolicy is the policy resolved for one tool of one server.
type ToolPolicy struct {
	// Withheld: the tool is not shown and calls to it are refused.
	Withheld bool
	// Reason is ReasonDenied or ReasonNotGranted when Withheld.
	Reason string
	// Description is the host's model-visible description, or nil.
	Description *string
	// Confirm is an explicit confirm setting, or nil (then
	// ConfirmDestructive and the tool's annotations decide).
	Confirm *bool
	// ConfirmDestructive is the confirm_destructive setting.
	ConfirmDestructive bool
	// Limits bound the tool's calls.
	Limits Limits
	// Subjects says which authenticated callers see and may call the tool.
	Subjects SubjectRule
}

// Tool resolves the policy for the tool named name. It is safe for
// concurrent use.
func (sp *ServerPolicy) Tool(name string) ToolPolicy {
	sp.mu.Lock()
	tp, ok := sp.tools[name]
	sp.mu.Unlock()
	if ok {
		return tp
	}
	tp = sp.resolveTool(name)
	sp.mu.Lock()
	if sp.tools == nil {
		sp.tools = make(map[string]ToolPolicy)
	}
	if len(sp.tools) < maxResolvedTools {
		sp.tools[name] = tp
	}
	sp.mu.Unlock()
	return tp
}

func (sp *ServerPolicy) resolveTool(name string) ToolPolicy {
	var tp ToolPolicy
	tp.Withheld, tp.Reason = sp.access(name)
	var buf [8]*toolRules // on the stack for the usual handful of levels
	places := buf[:0]     // tool entries, most specific first
	for _, r := range sp.levels {
		for _, key := range [2]string{name, "*"} {
			if t := r.tools[key]; t != nil {
				places = append(places, t)
			}
		}
	}
	for _, t := range places {
		if tp.Description == nil && t.description != nil {
			tp.Description = t.description
		}
		if tp.Confirm == nil && t.confirm != nil {
			tp.Confirm = t.confirm
		}
	}
	for _, r := range sp.levels {
		if r.confirmDestructive != nil {
			tp.ConfirmDestructive = *r.confirmDestructive
			break
		}
	}
	tp.Limits = sp.limits(name)
	tp.Subjects = sp.subjects(places)
	if tp.Subjects.Restricted() && !sp.server.IdentityChecked && !tp.Withheld {
		tp.Withheld, tp.Reason = true, ReasonSubject
	}
	return tp
}

func (sp *ServerPolicy) access(name string) (bool, string) {
	for _, r := range sp.levels {
		if r.deny[name] || r.deny["*"] {
			return true, ReasonDenied
		}
	}
	for _, r := range sp.levels {
		if r.allow != nil {
			if r.allow[name] || r.allow["*"] {
				return false, ""
			}
			return true, ReasonNotGranted
		}
	}
	return false, ""
}

func (sp *ServerPolicy) limits(name string) Limits {
	var buf [12]limitSet // on the stack for the usual handful of levels
	sets := buf[:0]      // most specific first
	for _, r := range sp.levels {
		for _, key := range [2]string{name, "*"} {
			if t := r.tools[key]; t != nil {
				sets = append(sets, t.limits)
			}
		}
		sets = append(sets, r.limits)
	}
	l := DefaultLimits
	l.ArgumentBytes = firstSet(sets, func(s limitSet) *int64 { return s.argumentBytes }, l.ArgumentBytes)
	l.ResultBytes = firstSet(sets, func(s limitSet) *int64 { return s.resultBytes }, l.ResultBytes)
	l.CallsPerMinute = firstSet(sets, func(s limitSet) *int64 { return s.callsPerMinute }, l.CallsPerMinute)
	l.CallTimeout = firstSet(sets, func(s limitSet) *time.Duration { return s.callTimeout }, l.CallTimeout)
	return l
}

func firstSet[T any](sets []limitSet, get func(limitSet) *T, def T) T {
	for _, s := range sets {
		if v := get(s); v != nil {
			return *v
		}
	}
	return def
}
