// Package lookup is mcpseal's read-only MCP server: it lets an agent ask
// whether a public server's contract changed (from a verified
// transparency log), which servers are pinned on this machine and which
// changes wait for review, what kind of change is pending, and how to put
// mcpseal in front of a server in each supported client.
//
// Tool output goes straight to a model, so it never carries third-party
// text: no descriptions, no definitions, no server-chosen names as they
// are. Names are reduced by contract.SafeName; everything else is a date,
// a count, a digest, a label code, or mcpseal's own words. The tools
// change nothing.
//
// Tools:
//
//	mcpseal_server_status    a public server's history in the log
//	mcpseal_my_servers       the servers pinned here, pending reviews (stdio only)
//	mcpseal_change_summary   the labels of a pending change (stdio only)
//	mcpseal_how_to_protect   the config for one client
//
// Over HTTP (loopback only) the server offers the two public tools and
// never the state of the machine it runs on.
//
// The server speaks the initialize-based protocol versions 2024-11-05 to
// 2025-11-25. A 2026-07-28 client's server/discover probe gets "method not
// found", and a dual-era client falls back to initialize.
package lookup

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/tlog"
)

// Versions this server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// MaxRequest bounds one request: a tool call carries a server name.
const MaxRequest = 64 << 10

// A PublicLog is a verified transparency log and its liveness record.
type PublicLog struct {
	Log  *tlog.Verified
	Live *tlog.Liveness
}

// Config is what the server reads.
type Config struct {
	// Log returns the current verified log, or an error when none is
	// configured or it does not verify. Nil: no public log.
	Log func() (*PublicLog, error)
	// Pins is the machine's pin store; nil hides the machine's state (and
	// its tools).
	Pins *pin.Store
	Now  func() time.Time
	// Version is mcpseal's version, for serverInfo.
	Version string
}

// A Server answers MCP requests.
type Server struct {
	cfg   Config
	tools []tool
}

// New returns a server. Without a pin store it offers only the public
// tools.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg}
	for _, t := range allTools {
		if t.machine && cfg.Pins == nil {
			continue
		}
		s.tools = append(s.tools, t)
	}
	return s
}

// Standard JSON-RPC error codes the server answers with.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// Handle answers one frame: a response, or nil for a notification or a
// response from the client.
func (s *Server) Handle(frame []byte) []byte {
	msg, err := jsonrpc.Peek(frame)
	switch {
	case errors.Is(err, jsonrpc.ErrSyntax):
		return jsonrpc.NewError(nil, codeParse, "parse error", nil)
	case err != nil:
		return jsonrpc.NewError(msg.ID, codeInvalidRequest, "invalid request", nil)
	case msg.Kind == jsonrpc.Batch:
		return jsonrpc.NewError(nil, codeInvalidRequest, "batches are not supported", nil)
	case msg.Kind != jsonrpc.Request:
		return nil
	}
	result, code, text := s.dispatch(msg.Method, msg.Params)
	if code != 0 {
		return jsonrpc.NewError(msg.ID, code, text, nil)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return jsonrpc.NewError(msg.ID, -32603, "internal error", nil)
	}
	return jsonrpc.NewResult(msg.ID, b)
}

func (s *Server) dispatch(method string, params []byte) (any, int, string) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		v := protocolVersions[0]
		for _, known := range protocolVersions {
			if p.ProtocolVersion == known {
				v = known
			}
		}
		return map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "mcpseal-lookup", "version": s.cfg.Version},
			"instructions":    "Read-only facts about MCP servers from mcpseal: contract history from a verified public log, the servers pinned on this machine and their pending reviews. Results carry names, dates, counts, digests and label codes only.",
		}, 0, ""
	case "ping":
		return map[string]any{}, 0, ""
	case "tools/list":
		defs := make([]map[string]any, 0, len(s.tools))
		for _, t := range s.tools {
			defs = append(defs, t.definition())
		}
		return map[string]any{"tools": defs}, 0, ""
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, codeInvalidParams, "invalid params"
		}
		for _, t := range s.tools {
			if t.name == p.Name {
				return s.call(t, p.Arguments), 0, ""
			}
		}
		return nil, codeInvalidParams, "unknown tool"
	}
	return nil, codeMethodNotFound, "method not found"
}
