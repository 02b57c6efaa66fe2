package launch

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNonPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"172.32.0.1", true},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"192.0.2.1", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fd00:ec2::254", false}, // AWS metadata over IPv6
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"2002:7f00:1::1", false},     // 6to4 of 127.0.0.1
		{"2001:db8::1", false},
		{"ff02::1", false},
	} {
		got := NonPublicReason(netip.MustParseAddr(c.addr)) == ""
		if got != c.public {
			t.Errorf("%s: public = %v, want %v (%q)", c.addr, got, c.public, NonPublicReason(netip.MustParseAddr(c.addr)))
		}
	}
}

// echoServer answers each line with the same line, on the host's
// loopback.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					fmt.Fprint(c, line)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// proxyRoundTrip sends CONNECT target through the proxy at addr and, on
// success, a line through the tunnel; it returns the status line and the
// echo.
func proxyRoundTrip(t *testing.T, addr, method, target string) (status, echo string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, target, target)
	br := bufio.NewReader(c)
	status, _ = br.ReadString('\n')
	status = strings.TrimSpace(status)
	if !strings.Contains(status, " 200 ") {
		return status, ""
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil || strings.TrimSpace(line) == "" {
			break
		}
	}
	fmt.Fprint(c, "ping\n")
	echo, _ = br.ReadString('\n')
	return status, strings.TrimSpace(echo)
}

type egressEvents struct {
	mu sync.Mutex
	ev []Event
}

func (e *egressEvents) add(ev Event) { e.mu.Lock(); e.ev = append(e.ev, ev); e.mu.Unlock() }

func TestEgressProxyRules(t *testing.T) {
	t.Parallel()
	echo := echoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := &egressEvents{}
	allow := []string{"127.0.0.1:" + echoPort, "api.example.com:443", "rebind.example.com:443"}
	p := newEgressProxyOn(ln, allow, events.add)
	// No DNS in tests: the resolver is a table, and every dial of a
	// public address lands on the echo server.
	p.resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "api.example.com":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		case "rebind.example.com":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, fmt.Errorf("no such host")
	}
	realDial := p.dial
	var dialed []string
	var mu sync.Mutex
	p.dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, a.String())
		mu.Unlock()
		if a.Addr().IsLoopback() {
			return realDial(ctx, a)
		}
		return realDial(ctx, netip.MustParseAddrPort(echo))
	}
	go p.serve()
	defer p.close()
	addr := ln.Addr().String()

	for _, c := range []struct {
		method, target, status string
	}{
		{"CONNECT", "127.0.0.1:" + echoPort, "200"},          // an IP entry, literally
		{"CONNECT", "api.example.com:443", "200"},            // a name that resolves to a public address
		{"CONNECT", "API.Example.com:443", "200"},            // names are not case-sensitive
		{"CONNECT", "api.example.com:8443", "403"},           // the port is part of the entry
		{"CONNECT", "rebind.example.com:443", "403"},         // one answer is link-local (metadata)
		{"CONNECT", "10.0.0.1:80", "403"},                    // not in the allowlist
		{"CONNECT", "localhost:" + echoPort, "403"},          // not in the allowlist (and loopback)
		{"CONNECT", "[::ffff:127.0.0.1]:" + echoPort, "200"}, // the same address, mapped
		{"GET", "http://api.example.com/", "405"},
	} {
		status, echoed := proxyRoundTrip(t, addr, c.method, c.target)
		if !strings.Contains(status, " "+c.status+" ") {
			t.Errorf("%s %s: %q, want %s", c.method, c.target, status, c.status)
			continue
		}
		if c.status == "200" && echoed != "ping" {
			t.Errorf("%s %s: echo %q through the tunnel", c.method, c.target, echoed)
		}
	}
	for _, d := range dialed {
		if strings.HasPrefix(d, "169.254.") || strings.HasPrefix(d, "10.") {
			t.Errorf("the proxy dialed %s", d)
		}
	}
	// The proxy records an event after it answers: wait for the last.
	count := func() (allowed, denied int) {
		events.mu.Lock()
		defer events.mu.Unlock()
		for _, e := range events.ev {
			switch e.Kind {
			case EventEgressAllowed:
				allowed++
			case EventEgressDenied:
				denied++
			}
		}
		return allowed, denied
	}
	allowed, denied := count()
	for deadline := time.Now().Add(5 * time.Second); (allowed != 4 || denied != 5) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		allowed, denied = count()
	}
	if allowed != 4 || denied != 5 {
		t.Errorf("%d allowed and %d denied events, want 4 and 5", allowed, denied)
	}
}
