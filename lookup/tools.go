package lookup

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/tlog"
)

// maxArg bounds a tool argument: a server identity is at most 220 bytes.
const maxArg = 256

// maxChanges bounds the changes one answer lists.
const maxChanges = 100

type tool struct {
	name, description string
	// arg is the one string argument, "" for none.
	arg, argDescription string
	required            bool
	// machine tools read this machine's pin store.
	machine bool
	run     func(s *Server, arg string) (any, error)
}

func (t tool) definition() map[string]any {
	schema := map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	if t.arg != "" {
		schema["properties"] = map[string]any{t.arg: map[string]any{"type": "string", "maxLength": maxArg, "description": t.argDescription}}
		if t.required {
			schema["required"] = []string{t.arg}
		}
	}
	return map[string]any{
		"name": t.name, "description": t.description, "inputSchema": schema,
		"annotations": map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
	}
}

var allTools = []tool{
	{name: "mcpseal_server_status", arg: "server", required: true,
		argDescription: "the server: npm:<package>, local:<name>, or an npm package name",
		description:    "Did this public MCP server's contract (the tools, prompts, resources and instructions it shows the model) change, when, and how many times? Answers from a verified transparency log with dates, counts, digests and change label codes.",
		run:            (*Server).serverStatus},
	{name: "mcpseal_my_servers", machine: true,
		description: "The MCP servers mcpseal has pinned on this machine, when each was last seen, and which have a change waiting for review.",
		run:         (*Server).myServers},
	{name: "mcpseal_change_summary", arg: "server", required: true, machine: true,
		argDescription: "the pinned server's 16-hex id or its label",
		description:    "What kind of change waits for review on a pinned server: label codes per changed definition (new-tool, new-field, new-instruction, wording-only...). The changed text itself is only shown in the terminal by 'mcpseal review'.",
		run:            (*Server).changeSummary},
	{name: "mcpseal_how_to_protect", arg: "client", required: true,
		argDescription: "claude-desktop, claude-code, cursor, vscode, codex, windsurf, cline or gemini-cli",
		description:    "How to put mcpseal in front of an MCP server in a given client: the config file and the exact change to make.",
		run:            (*Server).howToProtect},
}

// call runs t and wraps its answer as a tool result: the JSON as text
// and as structured content.
func (s *Server) call(t tool, rawArgs []byte) map[string]any {
	arg, err := toolArg(t, rawArgs)
	var out any
	if err == nil {
		out, err = t.run(s, arg)
	}
	if err != nil {
		out = map[string]any{"error": err.Error()}
	}
	text, _ := json.Marshal(out)
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}, "structuredContent": out}
	if err != nil {
		res["isError"] = true
	}
	return res
}

// toolArg reads the tool's one string argument. Errors are mcpseal's own
// words: the argument is never echoed.
func toolArg(t tool, raw []byte) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return "", errors.New("arguments must be an object")
	}
	for k := range args {
		if k != t.arg {
			return "", errors.New("unknown argument")
		}
	}
	if t.arg == "" {
		return "", nil
	}
	v, ok := args[t.arg]
	var s string
	if !ok || json.Unmarshal(v, &s) != nil || s == "" {
		return "", fmt.Errorf("argument %s is required and must be a non-empty string", t.arg)
	}
	if len(s) > maxArg {
		return "", fmt.Errorf("argument %s is longer than %d bytes", t.arg, maxArg)
	}
	return s, nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) serverStatus(arg string) (any, error) {
	if s.cfg.Log == nil {
		return nil, errors.New("no public log is configured: start the lookup server with --log DIR --key FILE")
	}
	pl, err := s.cfg.Log()
	if err != nil {
		return nil, errors.New("the public log does not verify; no answer is given from it")
	}
	id := arg
	if !tlog.ValidServer(id) {
		id = "npm:" + arg
	}
	out := map[string]any{"server": contract.SafeName(id), "log": map[string]any{
		"origin": pl.Log.Checkpoint.Origin, "size": pl.Log.Checkpoint.Size, "root": pl.Log.Checkpoint.Root.String()}}
	if !tlog.ValidServer(id) {
		out["found"] = false
		return out, nil
	}
	if live := pl.Live.Servers[id]; live != nil {
		out["lastChecked"] = stamp(live.Checked)
		if live.Seen != nil {
			out["lastSeen"] = stamp(*live.Seen)
		}
		if live.Failure != "" {
			out["lastCheckFailed"] = contract.SafeName(live.Failure)
		}
	}
	hist := pl.Log.History(id)
	if len(hist) == 0 {
		out["found"] = false
		return out, nil
	}
	first, latest := pl.Log.Parsed[hist[0]], pl.Log.Parsed[hist[len(hist)-1]]
	now := s.cfg.Now()
	out["found"] = true
	out["entries"] = len(hist)
	out["changes"] = len(hist) - 1
	out["firstSeen"] = stamp(first.Observed)
	out["contract"] = latest.Digests.Contract
	if len(hist) > 1 {
		out["lastChange"] = stamp(latest.Observed)
		out["changedAfter"] = stamp(latest.Since)
		out["daysSinceLastChange"] = int(now.Sub(latest.Observed) / (24 * time.Hour))
	}
	if latest.Package != nil {
		out["package"] = map[string]any{"name": contract.SafeName(latest.Package.Name), "version": contract.SafeName(latest.Package.Version)}
	}
	counts := map[string]int{}
	for _, k := range contract.Kinds {
		counts[string(k)] = len(latest.Definitions[k])
	}
	out["definitions"] = counts
	out["note"] = "An unchanged contract is not a safe one: the log records changes, it does not judge content."
	return out, nil
}

func (s *Server) myServers(string) (any, error) {
	sums, err := s.cfg.Pins.List()
	if err != nil {
		return nil, errors.New("the pin store cannot be read or fails its integrity check; run 'mcpseal verify' in a terminal")
	}
	list := make([]map[string]any, 0, len(sums))
	pending := 0
	for _, sm := range sums {
		e := map[string]any{"id": sm.ID}
		switch {
		case sm.Tampered != "":
			e["state"] = "tampered"
		case sm.AwaitingApproval:
			e["state"] = "awaiting-approval"
		case sm.DriftPending:
			e["state"] = "drift-pending"
		default:
			e["state"] = "ok"
		}
		if sm.Tampered == "" {
			e["label"] = contract.SafeName(sm.Label)
			e["definitions"] = sm.Definitions
			e["profiles"] = sm.Profiles
			e["pinned"] = stamp(sm.Created)
			if !sm.LastSeen.IsZero() {
				e["lastSeen"] = stamp(sm.LastSeen)
			}
		}
		if sm.DriftPending {
			pending++
			e["pending"] = sm.PendingDigest
			e["pendingProfiles"] = sm.PendingProfiles
			e["review"] = "mcpseal review " + sm.ID
		}
		list = append(list, e)
	}
	return map[string]any{"servers": list, "pendingReviews": pending}, nil
}

func (s *Server) changeSummary(arg string) (any, error) {
	rec, err := s.cfg.Pins.Get(arg)
	if errors.Is(err, pin.ErrNotFound) {
		return nil, errors.New("no pinned server has that id or label; call mcpseal_my_servers for the list")
	}
	if err != nil {
		return nil, errors.New("that server's pin cannot be read or fails its integrity check; run 'mcpseal verify' in a terminal")
	}
	out := map[string]any{"id": rec.ID, "label": contract.SafeName(rec.Label)}
	if len(rec.Pending) == 0 {
		out["pending"] = false
		return out, nil
	}
	out["pending"] = true
	out["awaitingFirstApproval"] = rec.AwaitingApproval()
	var detected time.Time
	for _, p := range rec.Pending {
		if p.Detected.After(detected) {
			detected = p.Detected
		}
	}
	out["detected"] = stamp(detected)
	out["digest"] = rec.PendingDigest
	out["reviewed"] = rec.PendingReviewed
	out["profiles"] = len(rec.Pending)
	// One entry per distinct change: the same change seen by several
	// client profiles is one change to review.
	counts := map[string]int{}
	changes := make([]map[string]any, 0, maxChanges)
	seen := map[string]bool{}
	distinct := 0
	for _, p := range rec.Pending {
		for _, ch := range p.Changes {
			key := string(ch.Kind) + "\x00" + ch.Name + "\x00" + string(ch.Op) + "\x00" + ch.Old + "\x00" + ch.New
			if seen[key] {
				continue
			}
			seen[key] = true
			distinct++
			for _, c := range ch.Codes() {
				counts[c]++
			}
			if len(changes) < maxChanges {
				changes = append(changes, map[string]any{"kind": string(ch.Kind), "op": string(ch.Op), "name": contract.SafeName(ch.Name), "labels": ch.Codes()})
			}
		}
	}
	out["changes"] = changes
	out["changeCount"] = distinct
	out["labels"] = counts
	out["review"] = "mcpseal review " + rec.ID
	out["approve"] = "mcpseal approve " + rec.ID
	out["note"] = "Label codes come from fixed rules, not a judgement. A person reviews the diff in a terminal and approves it there."
	return out, nil
}

func (s *Server) howToProtect(arg string) (any, error) {
	c, ok := clients[arg]
	if !ok {
		names := make([]string, 0, len(clients))
		for n := range clients {
			names = append(names, n)
		}
		sort.Strings(names)
		return map[string]any{"known": false, "clients": names}, nil
	}
	return map[string]any{"known": true, "client": arg, "config": c.file, "steps": c.steps()}, nil
}
