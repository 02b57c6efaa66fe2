package httpgw

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// CodeForbidden is the JSON-RPC error code of every front-door refusal. It
// sits in -32000..-32019 next to the gate's codes and never changes
// meaning; data.reason says which check refused.
const CodeForbidden = -32015

// Front-door refusal reasons. Stable strings.
const (
	ReasonHost          = "host"           // Host is not 127.0.0.1:PORT, localhost:PORT or [::1]:PORT
	ReasonOrigin        = "origin"         // an Origin that --allow-origin did not allow
	ReasonSecFetchSite  = "sec-fetch-site" // a browser request with no Origin, not user-initiated
	ReasonToken         = "token"          // no or wrong launch token
	ReasonContentType   = "content-type"   // a POST that is not application/json
	ReasonTooLarge      = "body-too-large" // a body over the limit
	ReasonAccept        = "accept"         // the client accepts neither JSON nor an event stream
	ReasonRoute         = "unknown-route"  // no such route
	ReasonMethod        = "method"         // an HTTP method the route does not serve
	ReasonSession       = "session"        // missing or unknown Mcp-Session-Id
	ReasonVersion       = "protocol-version"
	ReasonInvalid       = "invalid-message" // not a JSON-RPC message
	ReasonBatch         = "batch"           // a JSON-RPC batch
	ReasonBusy          = "busy"            // too many sessions, or the server is not reading
	ReasonHeaderMatch   = "header-mismatch" // Mcp-* headers that do not match the body
	ReasonTimeout       = "timeout"         // no answer within the request timeout
	ReasonStreamTooLong = "stream-too-large"
)

// refusal is a front-door answer: an HTTP status and a JSON-RPC error.
type refusal struct {
	status int
	code   int
	reason string
	msg    string
	id     []byte
}

func refuse(status int, reason, msg string) *refusal {
	return &refusal{status: status, code: CodeForbidden, reason: reason, msg: "mcpseal: " + msg}
}

// refusalData is the data member of a front-door refusal.
type refusalData struct {
	Reason string `json:"reason"`
	Route  string `json:"route,omitempty"`
}

func (gw *Gateway) writeRefusal(w http.ResponseWriter, r *http.Request, route string, f *refusal) {
	gw.event(Event{Kind: EventRefused, Route: route, Reason: f.reason, Status: f.status, Method: r.Method})
	data, _ := json.Marshal(refusalData{Reason: f.reason, Route: route})
	w.Header().Set("Content-Type", "application/json")
	if f.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", "GET, POST, DELETE")
	}
	w.WriteHeader(f.status)
	_, _ = w.Write(jsonrpc.NewError(f.id, f.code, f.msg, data))
}

// frontDoor runs the checks every request passes before anything else:
// Host, Origin, Sec-Fetch-Site, then the launch token.
func (gw *Gateway) frontDoor(r *http.Request) *refusal {
	if !gw.hostOK(r.Host) {
		return refuse(http.StatusForbidden, ReasonHost, "the Host header must be 127.0.0.1, localhost or [::1] with this gateway's port")
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		if len(origins) != 1 || !slices.Contains(gw.cfg.AllowOrigins, origins[0]) {
			return refuse(http.StatusForbidden, ReasonOrigin, "requests from this origin are refused (see --allow-origin)")
		}
	} else if s := r.Header.Values("Sec-Fetch-Site"); len(s) > 0 && (len(s) != 1 || s[0] != "none") {
		return refuse(http.StatusForbidden, ReasonSecFetchSite, "browser requests from web pages are refused")
	}
	if gw.cfg.Token != "" && r.Method != http.MethodOptions && !tokenOK(r.Header, gw.cfg.Token) {
		return refuse(http.StatusForbidden, ReasonToken, "missing or wrong launch token (send Authorization: Bearer TOKEN)")
	}
	return nil
}

// hostOK: exactly 127.0.0.1:PORT, localhost:PORT or [::1]:PORT.
func (gw *Gateway) hostOK(host string) bool {
	p := strconv.Itoa(gw.port)
	if gw.cfg.Auth != nil && host == gw.cfg.Auth.Config().Authority() {
		return true // the team gateway's public name (auth.json's resource)
	}
	return host == "127.0.0.1:"+p || host == "localhost:"+p || host == "[::1]:"+p
}

// ErrNotLoopback: the gateway binds loopback only.
var ErrNotLoopback = errors.New("the gateway binds only 127.0.0.1 or ::1")

// Listen opens the gateway's listener on addr ("127.0.0.1:8765",
// "[::1]:8765"; port 0 picks one). Anything but a loopback IP literal is
// refused: a name could resolve elsewhere, and 0.0.0.0 is every interface.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad listen address: %w", err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || (ip != netip.MustParseAddr("127.0.0.1") && ip != netip.IPv6Loopback()) {
		return nil, ErrNotLoopback
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("bad port %q", port)
	}
	return net.Listen("tcp", net.JoinHostPort(ip.String(), port))
}

// corsHeaders a browser may send to an allowed origin.
var corsHeaders = []string{"authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"}

// cors adds the CORS answer for an allowed Origin; it handles a preflight
// (OPTIONS) itself and reports whether it did.
func (gw *Gateway) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
		w.Header().Add("Vary", "Origin")
	}
	if r.Method != http.MethodOptions {
		return false
	}
	if origin == "" {
		w.Header().Set("Allow", "GET, POST, DELETE")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && !slices.Contains(corsHeaders, h) && !strings.HasPrefix(h, "mcp-param-") {
			w.WriteHeader(http.StatusForbidden)
			return true
		}
	}
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if h := r.Header.Get("Access-Control-Request-Headers"); h != "" {
		w.Header().Set("Access-Control-Allow-Headers", h)
	}
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
