// Command revproxy is the floor `mcpseal gateway`'s url routes are
// measured against: a bare net/http/httputil.ReverseProxy in front of one
// upstream URL, listening on a loopback port, with nothing else on the
// path (no checks, no rewriting beyond the target).
//
//	revproxy UPSTREAM-URL
//
// It prints "revproxy listening on http://127.0.0.1:PORT" to stderr when
// ready and serves until SIGTERM or SIGINT. A request for /PATH goes to
// UPSTREAM-URL's scheme and host with the path /PATH.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: revproxy UPSTREAM-URL")
		os.Exit(2)
	}
	u, err := url.Parse(os.Args[1])
	if err != nil || u.Host == "" {
		fmt.Fprintln(os.Stderr, "revproxy: bad upstream URL")
		os.Exit(2)
	}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "revproxy:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: rp}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "revproxy listening on http://%s\n", l.Addr())
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "revproxy:", err)
		os.Exit(1)
	}
}
