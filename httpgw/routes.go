package httpgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"

	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/jsonrpc"
	"github.com/mcpseal/mcpseal/pin"
)

// Routes is a parsed routes file: route name -> upstream.
//
// The file is JSON, owned by the host (never by a repository a model can
// write to):
//
//	{
//	  "routes": {
//	    "docs":  {"url": "https://mcp.example.com/mcp",
//	              "credential": {"header": "Authorization", "file": "/etc/mcpseal/docs.token"}},
//	    "local": {"url": "http://127.0.0.1:3000/mcp", "private": true},
//	    "mem":   {"command": ["npx", "-y", "@modelcontextprotocol/server-memory"],
//	              "name": "memory", "posture": "strict"}
//	  }
//	}
//
// A route has exactly one of "url" (a remote Streamable HTTP server,
// reached through package egress) or "command" (a stdio server, argv with
// no shell, started per session exactly as `mcpseal run` starts it).
// Optional members: "name" (the server's identity in the pin store, as
// run's --name; default: the URL, or the command line as run does),
// "posture" (guard, strict or monitor; default: the gateway's),
// "private" (url only: allow-list this exact URL for private and loopback
// addresses, see package egress), "credential" (url only: {"header": H,
// "file": PATH} or {"header": H, "env": NAME}, read once at start, sent to
// that URL's origin only).
//
// Unknown members, duplicate keys and anything ambiguous are errors: a
// setting the gateway would silently ignore is a setting the host thinks
// is enforced.
type Routes struct {
	Routes map[string]*Route `json:"routes"`
}

// Route is one upstream.
type Route struct {
	URL        string          `json:"url,omitempty"`
	Command    []string        `json:"command,omitempty"`
	Name       string          `json:"name,omitempty"`
	Posture    string          `json:"posture,omitempty"`
	Private    bool            `json:"private,omitempty"`
	Credential *CredentialSpec `json:"credential,omitempty"`
	// Lock is a team lock file enforced on the route, as run --lock
	// (needs Name); Policy a host policy file for it, as run --policy.
	Lock   string `json:"lock,omitempty"`
	Policy string `json:"policy,omitempty"`
}

// CredentialSpec names where a route's credential is read from.
type CredentialSpec struct {
	Header string `json:"header"`
	File   string `json:"file,omitempty"`
	Env    string `json:"env,omitempty"`
}

// Limits of the routes file.
const (
	// MaxRoutesFile bounds the file: a few hundred routes fit in 64 KiB.
	MaxRoutesFile = 1 << 20
	maxRoutes     = 256
	maxArgs       = 256
)

var routeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// ReadRoutes reads and checks a routes file. It is the host's config: a
// final link is followed, but a FIFO or device is refused without
// blocking.
func ReadRoutes(path string) (*Routes, error) {
	b, err := atomicfile.ReadFileFollow(path, MaxRoutesFile)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("the routes file is over %d bytes", MaxRoutesFile)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the routes file: %w", err)
	}
	rs, err := ParseRoutes(b)
	if err != nil {
		return nil, fmt.Errorf("routes file %s: %w", path, err)
	}
	return rs, nil
}

// ParseRoutes parses a routes file. Errors name routes and members, never
// values (a command line or URL can hold a token).
func ParseRoutes(b []byte) (*Routes, error) {
	if err := noAmbiguity(b); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rs Routes
	if err := dec.Decode(&rs); err != nil {
		return nil, errors.New("not a valid routes file (JSON with a \"routes\" object and only the documented members)")
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if len(rs.Routes) == 0 {
		return nil, errors.New("no routes")
	}
	if len(rs.Routes) > maxRoutes {
		return nil, fmt.Errorf("more than %d routes", maxRoutes)
	}
	for _, name := range rs.Names() {
		if err := rs.Routes[name].check(name); err != nil {
			return nil, err
		}
	}
	return &rs, nil
}

// Names returns the route names, sorted.
func (rs *Routes) Names() []string {
	names := make([]string, 0, len(rs.Routes))
	for n := range rs.Routes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *Route) check(name string) error {
	if !routeName().MatchString(name) {
		return fmt.Errorf("route name %q: use 1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)", safe(name))
	}
	if r == nil {
		return fmt.Errorf("route %s: not an object", name)
	}
	if (r.URL == "") == (len(r.Command) == 0) {
		return fmt.Errorf("route %s: needs exactly one of \"url\" or \"command\"", name)
	}
	if r.Posture != "" {
		if _, err := pin.ParsePosture(r.Posture); err != nil {
			return fmt.Errorf("route %s: \"posture\" must be guard, strict or monitor", name)
		}
	}
	if len(r.Command) > 0 {
		if r.Command[0] == "" || len(r.Command) > maxArgs {
			return fmt.Errorf("route %s: \"command\" needs a program and at most %d arguments", name, maxArgs-1)
		}
		if r.Private || r.Credential != nil {
			return fmt.Errorf("route %s: \"private\" and \"credential\" are for url routes", name)
		}
		return nil
	}
	if _, err := egress.ParseURL(r.URL); err != nil {
		return fmt.Errorf("route %s: %w", name, err)
	}
	if c := r.Credential; c != nil && (c.Header == "" || (c.File == "") == (c.Env == "")) {
		return fmt.Errorf("route %s: \"credential\" needs a \"header\" and exactly one of \"file\" or \"env\"", name)
	}
	return nil
}

// noAmbiguity refuses a file that encoding/json and a person could read
// two ways (threat model, known gap 10): a repeated member name at any
// depth (the decoder keeps the last), or, in the objects the decoder reads
// into structs (the file, each route, its credential), a member that
// equals a documented name up to case (the decoder matches names without
// case: {"command": ["good"], "Command": ["evil"]} runs evil).
func noAmbiguity(b []byte) error {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	if err := jsonrpc.CheckUnique(t); err != nil {
		return errors.New("invalid JSON or a repeated member name")
	}
	if err := jsonrpc.CheckNames(t, fileMembers); err != nil {
		return errors.New(`a member name that differs from "routes" only in case`)
	}
	routes, _, _ := lookupMember(t, "routes")
	if routes == nil || routes[0] != '{' {
		return nil // the decoder reports a wrong type
	}
	rs, _ := jsonrpc.Members(routes)
	for _, r := range rs {
		if r.Value[0] != '{' {
			continue
		}
		if jsonrpc.CheckNames(r.Value, routeMembers) != nil {
			return fmt.Errorf("route %q: a member name that differs from a documented one only in case", safe(r.Key))
		}
		if c, _, _ := lookupMember(r.Value, "credential"); c != nil && c[0] == '{' && jsonrpc.CheckNames(c, credentialMembers) != nil {
			return fmt.Errorf("route %q: a credential member name that differs from a documented one only in case", safe(r.Key))
		}
	}
	return nil
}

// The documented members of the routes file's objects.
var (
	fileMembers       = []string{"routes"}
	routeMembers      = []string{"url", "command", "name", "posture", "private", "credential", "lock", "policy"}
	credentialMembers = []string{"header", "file", "env"}
)

// lookupMember is the value of member name in obj (exactly so named).
func lookupMember(obj []byte, name string) ([]byte, bool, error) {
	v := make([][]byte, 1)
	err := jsonrpc.Lookup(obj, []string{name}, v)
	return v[0], v[0] != nil, err
}

// safe reduces a name for an error message.
func safe(s string) string {
	const max = 64
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '_'
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}
