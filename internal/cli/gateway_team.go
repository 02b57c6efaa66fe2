package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpseal/mcpseal/httpgw"
	"github.com/mcpseal/mcpseal/oauth"
	"github.com/mcpseal/mcpseal/policy"
)

// teamFlags are the team gateway's flags: a listener on the network, TLS,
// and OAuth access tokens instead of the launch token (docs/gateway.md,
// "The team gateway").
type teamFlags struct {
	listen         string
	tlsCert        string
	tlsKey         string
	auth           string
	behindProxy    bool
	trustedProxies []string
	// bindOrPort: --bind or --port was given (they exclude --listen).
	bindOrPort bool
}

func addTeamFlags(fl *pflag.FlagSet, t *teamFlags) {
	fl.StringVar(&t.listen, "listen", "", "listen on `HOST:PORT` (an IP literal); a non-loopback address needs --auth and TLS")
	fl.StringVar(&t.tlsCert, "tls-cert", "", "serve TLS with this PEM certificate `FILE` (with --tls-key)")
	fl.StringVar(&t.tlsKey, "tls-key", "", "the PEM private key `FILE` of --tls-cert")
	fl.StringVar(&t.auth, "auth", "", "require OAuth access tokens as described by this auth.json `FILE` (replaces the launch token)")
	fl.BoolVar(&t.behindProxy, "insecure-behind-proxy", false, "serve plain HTTP on a non-loopback address because a TLS proxy in front terminates TLS (needs --trusted-proxy)")
	fl.StringArrayVar(&t.trustedProxies, "trusted-proxy", nil, "with --insecure-behind-proxy, accept connections only from this `CIDR` (repeatable)")
}

// teamGateway is the checked team configuration; nil fields are off.
type teamGateway struct {
	addr      string // the listen address
	loopback  bool
	tls       *tls.Config
	verifier  *oauth.Verifier
	proxies   []netip.Prefix
	identites *identityPolicy
}

// checkTeam checks the team flags against the loopback flags. It returns
// the address to listen on.
func checkTeam(f gatewayFlags) (*teamGateway, error) {
	t := f.team
	// --bind and --port stay loopback-only, as before; only --listen
	// reaches the network.
	tg := &teamGateway{addr: net.JoinHostPort(f.bind, fmt.Sprint(f.port)), loopback: true}
	if t.listen != "" {
		if t.bindOrPort {
			return nil, &usageError{errors.New("--listen excludes --bind and --port")}
		}
		tg.addr = t.listen
		host, _, err := net.SplitHostPort(tg.addr)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--listen: %w", err)}
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || ip.Zone() != "" {
			return nil, &usageError{withHint(errors.New("--listen takes an IP literal, not a name"), "a name could resolve to another address; use 0.0.0.0:8443 or a specific address")}
		}
		tg.loopback = ip == netip.MustParseAddr("127.0.0.1") || ip == netip.IPv6Loopback()
	}
	if (t.tlsCert == "") != (t.tlsKey == "") {
		return nil, &usageError{errors.New("--tls-cert and --tls-key go together")}
	}
	if t.auth != "" && (f.noToken || f.tokenFile != "") {
		return nil, &usageError{errors.New("--auth replaces the launch token: it excludes --no-token and --token-file")}
	}
	if len(t.trustedProxies) > 0 && !t.behindProxy {
		return nil, &usageError{errors.New("--trusted-proxy is for --insecure-behind-proxy")}
	}
	if t.behindProxy {
		if t.tlsCert != "" {
			return nil, &usageError{errors.New("--insecure-behind-proxy and --tls-cert exclude each other")}
		}
		if len(t.trustedProxies) == 0 {
			return nil, &usageError{withHint(errors.New("--insecure-behind-proxy needs at least one --trusted-proxy CIDR"), "name the load balancer's addresses, e.g. --trusted-proxy 10.0.0.0/24")}
		}
		for _, s := range t.trustedProxies {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, &usageError{fmt.Errorf("--trusted-proxy %q is not a CIDR prefix", s)}
			}
			tg.proxies = append(tg.proxies, p.Masked())
		}
	}
	if !tg.loopback {
		if t.auth == "" {
			return nil, &usageError{withHint(errors.New("a non-loopback --listen needs --auth"), "the launch token is for one machine; a team gateway authenticates every caller (docs/gateway.md)")}
		}
		if t.tlsCert == "" && !t.behindProxy {
			return nil, &usageError{withHint(errors.New("a non-loopback --listen needs TLS"), "pass --tls-cert and --tls-key, or --insecure-behind-proxy with --trusted-proxy when a load balancer terminates TLS")}
		}
	}
	if t.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(t.tlsCert, t.tlsKey)
		if err != nil {
			return nil, errors.New("cannot load --tls-cert and --tls-key (PEM certificate and matching key)")
		}
		tg.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return tg, nil
}

// start loads auth.json and reaches its issuers, warns about
// --insecure-behind-proxy, and opens the listener.
func (tg *teamGateway) start(e *env, f gatewayFlags, routes *httpgw.Routes, logger *slog.Logger) (net.Listener, error) {
	if f.team.behindProxy {
		fmt.Fprintln(e.stderr, "mcpseal: WARNING: --insecure-behind-proxy: THIS GATEWAY SERVES PLAIN HTTP. ACCESS TOKENS CROSS THE NETWORK UNENCRYPTED")
		fmt.Fprintf(e.stderr, "mcpseal: WARNING: between the proxy and this gateway; only connections from %s are accepted.\n", strings.Join(f.team.trustedProxies, ", "))
		logger.Warn("serving plain HTTP behind a TLS-terminating proxy", "trusted_proxies", strings.Join(f.team.trustedProxies, ","))
	}
	if f.team.auth != "" {
		cfg, err := oauth.ReadConfig(f.team.auth)
		if err != nil {
			return nil, err
		}
		v, err := oauth.NewVerifier(context.Background(), cfg, oauth.Options{Getenv: e.getenv})
		if err != nil {
			return nil, withHint(fmt.Errorf("auth: %w", err), "the gateway reads each issuer's metadata and keys at start")
		}
		tg.verifier = v
		if tg.identites, err = newIdentityPolicy(e, f, routes, logger); err != nil {
			return nil, err
		}
	}
	var l net.Listener
	var err error
	if tg.loopback {
		l, err = httpgw.Listen(tg.addr)
	} else {
		l, err = httpgw.ListenNetwork(tg.addr)
	}
	if err != nil {
		return nil, err
	}
	if tg.tls != nil {
		l = tls.NewListener(l, tg.tls)
	}
	return l, nil
}

// configure adds the team settings to the gateway's configuration.
func (tg *teamGateway) configure(c *httpgw.Config) {
	if tg.verifier != nil {
		c.Auth = tg.verifier
		c.Identities = tg.identites
		c.Token = ""
	}
	c.TrustedProxies = tg.proxies
}

func (tg *teamGateway) scheme() string {
	if tg.tls != nil {
		return "https"
	}
	return "http"
}

// identityPolicy is the host policy's subject rules, per route, for the
// gateway: its listings, and the per-caller calls its gates admit.
type identityPolicy struct {
	routes map[string]*policy.ServerPolicy // nil entry: no policy file, every tool for everyone
	rates  *policy.SubjectRates
}

func newIdentityPolicy(e *env, f gatewayFlags, routes *httpgw.Routes, logger *slog.Logger) (*identityPolicy, error) {
	ip := &identityPolicy{routes: map[string]*policy.ServerPolicy{}, rates: policy.NewSubjectRates(nil)}
	for _, name := range routes.Names() {
		spec := routes.Routes[name]
		path := spec.Policy
		if path == "" {
			path = f.policy
		}
		pol, err := loadPolicy(e, path)
		if err != nil {
			return nil, exitWith(ExitRefused, withHint(fmt.Errorf("host policy: %w", err), "check it with 'mcpseal policy-check'"))
		}
		id := spec.Identity()
		if pol != nil {
			ip.routes[name] = pol.Server(policy.Server{ID: id.ID, Label: id.Label, IdentityChecked: true})
		}
		if pol != nil && pol.Audit().Required {
			// Each session's gate opens the log (and refuses calls when it
			// cannot); a log that cannot be opened at all stops the
			// gateway before it serves anyone.
			w, err := openAuditWriter(e, pol, logger, f.state)
			if err != nil {
				return nil, exitWith(ExitRefused, withHint(fmt.Errorf("audit log: %w", err), "the host policy requires the audit log"))
			}
			_ = w.Close()
		}
	}
	return ip, nil
}

// policyWho is the caller as the policy sees it (nil for none).
func policyWho(id *oauth.Identity) *policy.Who {
	if id == nil {
		return nil
	}
	return &policy.Who{Issuer: id.Issuer, Subject: id.Subject, ClientID: id.ClientID, Scopes: id.Scopes, Groups: id.Groups, Roles: id.Roles}
}

// Visible implements httpgw.IdentityPolicy.
func (ip *identityPolicy) Visible(route string, id *oauth.Identity, tool string) bool {
	sp := ip.routes[route]
	return sp == nil || sp.Tool(tool).Subjects.Allows(policyWho(id))
}

// Call implements httpgw.IdentityPolicy.
func (ip *identityPolicy) Call(route string, id *oauth.Identity, tool string) string {
	sp := ip.routes[route]
	if sp == nil {
		return ""
	}
	rule := sp.Tool(tool).Subjects
	if !ip.rates.Allow(route+"\x00"+id.Key()+"\x00"+tool, rule.CallsPerMinute()) {
		return policy.ReasonRateLimited
	}
	if rule.Confirms(policyWho(id)) {
		return httpgw.NeedsConfirmation
	}
	return ""
}

// auditIdentity is what the audit log records of a caller.
func auditIdentity(id *oauth.Identity) (subject, issuer, client, jti string) {
	if id == nil {
		return "", "", "", ""
	}
	// The audit log reduces them to its safe set as it writes (and audit
	// tail --subject reduces its argument the same way).
	return id.Subject, id.Issuer, id.ClientID, strings.TrimPrefix(id.JTIDigest, "sha256:")
}
