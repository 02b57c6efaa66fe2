package launch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of the egress proxy.
const (
	// egressMaxConns: a server opens a handful of connections at once.
	egressMaxConns = 32
	// egressHeaderBytes bounds a CONNECT request with its headers.
	egressHeaderBytes = 8 << 10
	// egressHeaderTime bounds the wait for that request.
	egressHeaderTime = 10 * time.Second
	// egressDialTime bounds name resolution and the connection.
	egressDialTime = 10 * time.Second
	// egressIdle ends a tunnel that carries nothing for this long.
	egressIdle = 5 * time.Minute
)

// egressProxy is mcpseal's CONNECT proxy for a sandbox in egress mode. It
// serves a listener that lives in the sandbox's network namespace, and
// dials from mcpseal's.
type egressProxy struct {
	ln       net.Listener
	allow    map[string]bool // "host:port" entries
	events   func(Event)
	resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	dial     func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)

	sem  chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	open map[net.Conn]struct{}
}

func newEgressProxy(lnFile *os.File, allow []string, events func(Event)) (*egressProxy, error) {
	ln, err := net.FileListener(lnFile)
	lnFile.Close()
	if err != nil {
		return nil, fmt.Errorf("egress listener: %w", err)
	}
	p := newEgressProxyOn(ln, allow, events)
	go p.serve()
	return p, nil
}

func newEgressProxyOn(ln net.Listener, allow []string, events func(Event)) *egressProxy {
	p := &egressProxy{ln: ln, allow: map[string]bool{}, events: events, sem: make(chan struct{}, egressMaxConns), open: map[net.Conn]struct{}{}}
	for _, a := range allow {
		p.allow[a] = true
	}
	p.resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	p.dial = func(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr.String())
	}
	return p
}

func (p *egressProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		select {
		case p.sem <- struct{}{}:
		default:
			_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n")
			c.Close()
			continue
		}
		p.track(c, true)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.sem }()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

func (p *egressProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.open[c] = struct{}{}
	} else {
		delete(p.open, c)
	}
}

// close stops the proxy and ends every tunnel.
func (p *egressProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *egressProxy) handle(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(egressHeaderTime))
	br := bufio.NewReaderSize(io.LimitReader(c, egressHeaderBytes), 1024)
	req, err := http.ReadRequest(br)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
		return
	}
	if req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\n")
		p.deny("", 0, "only CONNECT is served")
		return
	}
	host, port, target, reason := p.check(req.Host)
	if reason != "" {
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n")
		p.deny(host, port, reason)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), egressDialTime)
	up, err := p.dial(ctx, target)
	cancel()
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
		p.deny(host, port, "the connection failed")
		return
	}
	defer up.Close()
	p.track(up, true)
	defer p.track(up, false)
	if p.events != nil {
		p.events(Event{Kind: EventEgressAllowed, Host: host, Port: port, Count: 1})
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent after its request (a TLS ClientHello) are in
	// br already.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up)
}

// check decides a CONNECT authority: it must be an allowlist entry, and
// a host name must resolve only to public addresses. It returns the
// address to dial (the one it checked, so a second lookup cannot change
// it), or a reason for refusing.
func (p *egressProxy) check(authority string) (host string, port int, target netip.AddrPort, reason string) {
	h, ps, err := net.SplitHostPort(authority)
	if err != nil {
		return "", 0, target, "not host:port"
	}
	h = strings.ToLower(h)
	port, err = strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, target, "not host:port"
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		h = ip.Unmap().String()
	} else if !validHostname(h) {
		return "", 0, target, "not a host name"
	}
	entry := net.JoinHostPort(h, strconv.Itoa(port))
	if !p.allow[entry] {
		return h, port, target, "not in the profile's allowlist"
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		// The entry is this address, literally: the host chose it.
		return h, port, netip.AddrPortFrom(ip, uint16(port)), ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), egressDialTime)
	defer cancel()
	addrs, err := p.resolver(ctx, h)
	if err != nil || len(addrs) == 0 {
		return h, port, target, "the name did not resolve"
	}
	for _, a := range addrs {
		if r := NonPublicReason(a.Unmap()); r != "" {
			return h, port, target, "the name resolves to a " + r + " address"
		}
	}
	return h, port, netip.AddrPortFrom(addrs[0].Unmap(), uint16(port)), ""
}

func (p *egressProxy) deny(host string, port int, reason string) {
	if p.events != nil {
		p.events(Event{Kind: EventEgressDenied, Host: host, Port: port, Reason: reason, Count: 1})
	}
}

// splice copies both ways until both sides end; a direction that carries
// nothing for egressIdle ends.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(egressIdle))
			n, err := src.Read(buf)
			if n > 0 {
				_ = dst.SetWriteDeadline(time.Now().Add(egressIdle))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}
