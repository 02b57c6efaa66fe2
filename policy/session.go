package policy

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpseal/mcpseal/contract"
)

// Options are the side effects a Checker uses. Zero fields take defaults.
type Options struct {
	// HTTPClient carries http providers' requests (its transport, proxy
	// and TLS settings); redirects are never followed whatever it says.
	// A client without a Transport, and the default (a new client), get
	// a transport that uses no proxy from the environment.
	HTTPClient *http.Client
	// Getenv reads the variables named by "env" and "bearer_env".
	// Default: os.Getenv.
	Getenv func(string) string
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
	// Schemas is the compiled schema cache. Default: a new one.
	Schemas *Schemas
	// Logger receives the operator's view of provider failures (in
	// mcpseal's words). Default: discard.
	Logger *slog.Logger
}

// A Checker applies one policy to every session of a process. It is safe
// for concurrent use.
type Checker struct {
	policy    *Policy
	schemas   *Schemas
	providers map[string]provider
	now       func() time.Time
	log       *slog.Logger
}

// NewChecker returns a Checker for p.
func NewChecker(p *Policy, o Options) *Checker {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Schemas == nil {
		o.Schemas = NewSchemas(0)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Checker{policy: p, schemas: o.Schemas, providers: map[string]provider{}, now: o.Now, log: o.Logger}
	for name, pc := range p.providers {
		c.providers[name] = newProvider(pc, o)
	}
	return c
}

// Policy returns the checker's policy.
func (c *Checker) Policy() *Policy { return c.policy }

// Schemas returns the checker's schema cache.
func (c *Checker) Schemas() *Schemas { return c.schemas }

// A Session applies the policy to one client–server session: it keeps the
// session's decision cache and rate counts. Its methods are safe for
// concurrent use, so a gate may run a slow provider off its message loop.
type Session struct {
	c      *Checker
	server Server
	sp     *ServerPolicy
	cache  *decisionCache
	rate   *rateLimiter
}

// Session starts the policy's view of one session with s. The label is
// reduced to a safe character set (pin labels already are), since it
// appears in refusals a model may read.
func (c *Checker) Session(s Server) *Session {
	s.Label = safeLabel(s.Label)
	return &Session{c: c, server: s, sp: c.policy.Server(s), cache: newDecisionCache(), rate: newRateLimiter()}
}

// Server returns the resolved server policy.
func (ss *Session) Server() *ServerPolicy { return ss.sp }

// Tool resolves the policy of the tool named name.
func (ss *Session) Tool(name string) ToolPolicy { return ss.sp.Tool(name) }

// Listing shapes one verified definition for the client (see
// ServerPolicy.Listing).
func (ss *Session) Listing(def contract.Definition) (Listed, error) { return ss.sp.Listing(def) }

// CheckCall applies everything that does not ask anyone to a tools/call of
// the verified tool def, in order: access (deny, allow), the
// argument_bytes limit on the raw params, calls_per_minute, and the pinned
// inputSchema. params is the request's raw params member. It returns nil
// when the call may go on to BeforeToolCall.
func (ss *Session) CheckCall(def contract.Definition, params []byte) *Refusal {
	tool := contract.SafeName(def.Name)
	tp := ss.sp.Tool(def.Name)
	if tp.Withheld {
		return ss.accessRefusal(tool, tp.Reason)
	}
	if int64(len(params)) > tp.Limits.ArgumentBytes {
		return &Refusal{Kind: KindPolicy, Reason: ReasonArgumentsTooLarge, Tool: tool,
			Why:  "mcpseal: the arguments of tool " + tool + " exceed the host's argument_bytes limit; the call was not forwarded",
			Hint: "raise limits.argument_bytes for this tool in the host policy"}
	}
	if r := ss.c.schemas.CheckArguments(def, params); r != nil {
		return r
	}
	if !ss.rate.allow(def.Name, tp.Limits.CallsPerMinute, ss.c.now()) {
		return &Refusal{Kind: KindPolicy, Reason: ReasonRateLimited, Tool: tool,
			Why:  "mcpseal: tool " + tool + " was called more often than the host's calls_per_minute limit; the call was not forwarded",
			Hint: "wait, or raise limits.calls_per_minute for this tool in the host policy"}
	}
	return nil
}

func (ss *Session) accessRefusal(tool, reason string) *Refusal {
	r := &Refusal{Kind: KindPolicy, Reason: reason, Tool: tool}
	if reason == ReasonDenied {
		r.Why = "mcpseal: the host policy denies tool " + tool + " of server " + ss.server.Label + "; the call was not forwarded"
		r.Hint = "remove the tool from \"deny\" in the host policy to allow it"
	} else {
		r.Why = "mcpseal: the host policy does not grant tool " + tool + " of server " + ss.server.Label + "; the call was not forwarded"
		r.Hint = "add the tool to \"allow\" for this server in the host policy to grant it"
	}
	return r
}

// CheckResult applies the result_bytes limit and the pinned outputSchema
// to a tools/call result of def. result is the response's raw result
// member. A non-nil refusal (KindWithheld) means the result must not reach
// the client.
func (ss *Session) CheckResult(def contract.Definition, result []byte) *Refusal {
	if r := ss.overResultBytes(def, len(result), "the result"); r != nil {
		return r
	}
	return ss.c.schemas.CheckStructured(def, result)
}

// CheckError applies the result_bytes limit to a JSON-RPC error answer to
// a tools/call of def (rpcError is its raw error object): a client shows
// the error's message and data to the model as it shows a result. Nil
// means deliver it.
func (ss *Session) CheckError(def contract.Definition, rpcError []byte) *Refusal {
	return ss.overResultBytes(def, len(rpcError), "the error answer")
}

// overResultBytes refuses n bytes of what (the result, the error answer)
// of a call of def when they pass the tool's result_bytes limit.
func (ss *Session) overResultBytes(def contract.Definition, n int, what string) *Refusal {
	if int64(n) <= ss.sp.Tool(def.Name).Limits.ResultBytes {
		return nil
	}
	tool := contract.SafeName(def.Name)
	return &Refusal{Kind: KindWithheld, Reason: ReasonResultTooLarge, Tool: tool,
		Why:  "mcpseal: " + what + " of tool " + tool + " was withheld: it exceeds the host's result_bytes limit",
		Hint: "raise limits.result_bytes for this tool in the host policy"}
}

// CallTimeoutRefusal is the refusal the gate answers with when a call of
// def got no result within its call_timeout.
func (ss *Session) CallTimeoutRefusal(def contract.Definition) *Refusal {
	tool := contract.SafeName(def.Name)
	return &Refusal{Kind: KindWithheld, Reason: ReasonCallTimeout, Tool: tool,
		Why:  "mcpseal: tool " + tool + " gave no result within the host's call_timeout of " + ss.sp.Tool(def.Name).Limits.CallTimeout.String() + "; a late result will be dropped",
		Hint: "raise limits.call_timeout for this tool in the host policy"}
}

// hookContext returns the context for one hook.
func hookContext(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// maxLabelLen bounds a server label in refusals: a SafeName plus " [N args]".
const maxLabelLen = 80

// safeLabel keeps ASCII letters, digits, "_.:/~-", space and brackets,
// replaces every other rune with '_' and cuts s to maxLabelLen runes; an
// empty label becomes "_".
func safeLabel(s string) string {
	if s == "" {
		return "_"
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if len(out) == maxLabelLen {
			break
		}
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', strings.ContainsRune("_.:/~-[] ", r):
			out = append(out, r)
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}
