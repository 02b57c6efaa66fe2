package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// Resolver resolves a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// AddressError is a connection refused by the egress rule.
type AddressError struct {
	Addr  netip.Addr
	Class Class
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("egress: refused to connect to a %s address", e.Class)
}

// errWrongHost: the transport asked for another host than the upstream's,
// which only a followed redirect or a proxy could cause.
var errWrongHost = errors.New("egress: refused to dial a host other than the upstream's")

// maxAddrs bounds the addresses tried for one name.
const maxAddrs = 8

// dialer connects to one upstream host and nowhere else.
type dialer struct {
	host, port string
	resolver   Resolver
	timeout    time.Duration
	// pinned holds a private upstream's addresses, resolved once at start;
	// nil for a public upstream, whose name is resolved on every dial.
	pinned []netip.Addr
	// translate maps an approved address to the one actually dialled.
	// Tests only: it lets a fake public address reach an httptest server.
	translate func(netip.AddrPort) netip.AddrPort
	refused   func(*AddressError)
}

// DialContext is the transport's dial function.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil || host != d.host || port != d.port {
		return nil, errWrongHost
	}
	addrs := d.pinned
	if addrs == nil {
		if addrs, err = d.lookup(ctx, host); err != nil {
			return nil, err
		}
	}
	portNum, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, errWrongHost
	}
	var first error
	for _, a := range addrs {
		conn, err := d.dialOne(ctx, network, netip.AddrPortFrom(a, uint16(portNum)))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		var ae *AddressError
		if errors.As(err, &ae) && d.refused != nil {
			d.refused(ae)
		}
	}
	if first == nil {
		first = fmt.Errorf("egress: no address for the upstream host")
	}
	return nil, first
}

func (d *dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("egress: cannot resolve the upstream host: %w", err)
	}
	if len(addrs) > maxAddrs {
		addrs = addrs[:maxAddrs]
	}
	return addrs, nil
}

// dialOne connects to ap. The egress rule is checked in Control, on the
// address the socket is about to connect to.
func (d *dialer) dialOne(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	target := ap
	if d.translate != nil {
		target = d.translate(ap)
	}
	nd := net.Dialer{
		Timeout: d.timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			real, err := netip.ParseAddrPort(address)
			if err != nil || real.Addr().Unmap() != target.Addr().Unmap() || real.Port() != target.Port() {
				return errWrongHost
			}
			check := real.Addr()
			if d.translate != nil {
				check = ap.Addr()
			}
			return d.allow(check)
		},
	}
	return nd.DialContext(ctx, network, target.String())
}

// allow applies the egress rule to one address.
func (d *dialer) allow(a netip.Addr) error {
	a = a.Unmap()
	if d.pinned != nil {
		if slices.Contains(d.pinned, a) && privateOK(a) {
			return nil
		}
		return &AddressError{Addr: a, Class: Classify(a)}
	}
	if c := Classify(a); c != Public {
		return &AddressError{Addr: a, Class: c}
	}
	return nil
}

// pinAddrs resolves a private upstream's host once and checks every address.
func pinAddrs(ctx context.Context, r Resolver, host string, timeout time.Duration) ([]netip.Addr, error) {
	d := &dialer{resolver: r, timeout: timeout}
	addrs, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if !privateOK(a) {
			return nil, &AddressError{Addr: a, Class: Classify(a)}
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("egress: no address for the upstream host")
	}
	return out, nil
}
