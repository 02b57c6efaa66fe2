//go:build linux

package siem

import (
	"context"
	"crypto/tls"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpseal/mcpseal/audit"
)

// TestAttackSyslogStallLosesKernelBuffers: a syslog receiver completes
// the TLS handshake, then stops reading (stalled, or its host gone) and
// later resets. The batch's write returns as soon as the bytes sit in the
// local kernel's send buffer; had the cursor moved then, a reset would
// lose whatever the buffer held beyond the resend window. The send only
// succeeds once the receiver's TCP acknowledged every byte: here it fails,
// so the cursor stays and the batch is sent again on the next connection.
func TestAttackSyslogStallLosesKernelBuffers(t *testing.T) {
	saved := syslogDrain
	syslogDrain = 300 * time.Millisecond
	t.Cleanup(func() { syslogDrain = saved })
	home, _ := newLog(t, 60)
	lines, _, err := audit.ReadAfter(home, 0, 60)
	if err != nil || len(lines) != 60 {
		t.Fatal(len(lines), err)
	}
	cert, ca := tlsFiles(t)
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 2048) })
		if err != nil {
			return err
		}
		return serr
	}}
	raw, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{cert}})
	defer l.Close()
	stalled := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_ = c.(*tls.Conn).Handshake()
		stalled <- c // and never read
	}()
	s, err := newSyslog(SinkConfig{Name: "siem", Type: "syslog", Address: raw.Addr().String(), CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	err = s.send(ctx, lines)
	c := <-stalled
	defer c.Close()
	if err == nil {
		t.Fatal("a batch the stalled receiver never took counted as sent: the cursor would move past it")
	}
	if s.conn != nil || s.resendOnReconnect() == 0 {
		t.Fatal("the connection was kept after a batch that was not taken")
	}
}
