package policy

// This file holds the policy file's JSON shape. The strict decoder
// (decode.go) walks these types by reflection, so a json tag here is the
// whole declaration of a key: there is no other list to keep in step.
// Optional settings are pointers (or nil slices) so that "not set" and
// "set to the zero value" differ: a more specific place inherits only what
// it leaves unset (see resolve.go).

// fileJSON is the whole file.
type fileJSON struct {
	Version   int                      `json:"version"`
	Defaults  *serverJSON              `json:"defaults,omitempty"`
	Servers   map[string]*serverJSON   `json:"servers,omitempty"`
	Providers map[string]*providerJSON `json:"providers,omitempty"`
	Audit     *auditJSON               `json:"audit,omitempty"`
	// Subjects names classes of authenticated callers (subjects.go).
	Subjects map[string]*subjectJSON `json:"subjects,omitempty"`
}

// serverJSON is one server's entry, and the shape of "defaults".
type serverJSON struct {
	// Connect is "allow" or "block".
	Connect string `json:"connect,omitempty"`
	// Local is "pass", "refuse" or "providers": what before_connect does
	// with a stdio server.
	Local string `json:"local,omitempty"`
	// Allow, when set, grants only the tools it names ("*": all).
	Allow []string `json:"allow,omitempty"`
	// Deny withholds the tools it names ("*": all); it accumulates.
	Deny               []string `json:"deny,omitempty"`
	ConfirmDestructive *bool    `json:"confirm_destructive,omitempty"`
	AllowWarn          *bool    `json:"allow_warn,omitempty"`
	// Providers names the decision providers consulted, besides the
	// built-in one.
	Providers      []string             `json:"providers,omitempty"`
	ConfirmTimeout string               `json:"confirm_timeout,omitempty"`
	Limits         *limitsJSON          `json:"limits,omitempty"`
	Tools          map[string]*toolJSON `json:"tools,omitempty"`
}

// toolJSON is one tool's entry (or "*", every tool of the server).
type toolJSON struct {
	Description *string     `json:"description,omitempty"`
	Confirm     *bool       `json:"confirm,omitempty"`
	Limits      *limitsJSON `json:"limits,omitempty"`
	// Subjects, when set, names the subject classes that see and may call
	// the tool; SubjectCallsPerMinute bounds each caller's calls of it
	// across sessions (subjects.go).
	Subjects              []string `json:"subjects,omitempty"`
	SubjectCallsPerMinute *int64   `json:"subject_calls_per_minute,omitempty"`
	// ConfirmSubjects names the subject classes whose calls of the tool a
	// person must confirm.
	ConfirmSubjects []string `json:"confirm_subjects,omitempty"`
}

// limitsJSON bounds calls. Durations are Go duration strings ("30s").
type limitsJSON struct {
	ArgumentBytes  *int64 `json:"argument_bytes,omitempty"`
	ResultBytes    *int64 `json:"result_bytes,omitempty"`
	CallsPerMinute *int64 `json:"calls_per_minute,omitempty"`
	CallTimeout    string `json:"call_timeout,omitempty"`
}

// providerJSON configures one external decision provider.
type providerJSON struct {
	// Kind is "command" or "http".
	Kind string `json:"kind"`
	// Command is the argv of a command provider, run without a shell.
	Command []string `json:"command,omitempty"`
	// Env names the environment variables a command provider receives.
	Env []string `json:"env,omitempty"`
	// URL is the endpoint of an http provider.
	URL string `json:"url,omitempty"`
	// Keys pins an http provider's receipt keys: key id to
	// "ed25519:<base64 public key>".
	Keys map[string]string `json:"keys,omitempty"`
	// BearerEnv names the environment variable holding the bearer token
	// an http provider is sent.
	BearerEnv string `json:"bearer_env,omitempty"`
	// Timeout bounds one decision ("5s").
	Timeout string `json:"timeout,omitempty"`
	// Stages lists the hooks the provider decides ("before_connect",
	// "after_connect", "before_tool_call"); all three when unset.
	Stages []string `json:"stages,omitempty"`
}

// auditJSON configures the audit log.
type auditJSON struct {
	MaxFileBytes *int64 `json:"max_file_bytes,omitempty"`
	MaxFiles     *int64 `json:"max_files,omitempty"`
	// Required makes a failed audit write refuse the operation.
	Required *bool `json:"required,omitempty"`
}
