package siem

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/audit"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// RFC 5424 over TLS (RFC 5425): each message is framed as its length in
// decimal, a space, and the message (octet counting).
const (
	sdID           = "mcpseal@32473"
	facilityLocal0 = 16
	sevNotice      = 5
	sevInfo        = 6
	maxCAFile      = 1 << 20
	// syslogResend is how many events are sent again on a new connection:
	// TCP acknowledges nothing to the application, so the last events
	// written on a connection that broke may not have been read by the
	// receiver even though its TCP took them. Receivers de-duplicate by
	// seq.
	syslogResend = 256
)

// The cursor moves only once the receiver's TCP acknowledged every byte
// of a batch (on Linux: the socket's send queue is empty), not when the
// write returned: a write returns as soon as the bytes are in the local
// kernel's buffer, which holds megabytes on a long link, all lost when the
// connection breaks. A batch the receiver's TCP does not take within
// syslogDrain (a receiver that stalls, a link that is down) is a failed
// send: the connection is closed and the batch sent again on the next.
var (
	syslogDrain     = sendTimeout
	syslogDrainPoll = 2 * time.Millisecond
)

type syslog struct {
	name string
	addr string
	tls  *tls.Config
	host string
	pid  string
	conn *tls.Conn
}

func newSyslog(c SinkConfig) (*syslog, error) {
	host, _, _ := net.SplitHostPort(c.Address)
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if c.ServerName != "" {
		conf.ServerName = c.ServerName
	}
	if c.CAFile != "" {
		pem, err := atomicfile.ReadFileFollow(c.CAFile, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("ca_file holds no certificate")
		}
		conf.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, errors.New("cert_file and key_file are not a certificate and its key")
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return &syslog{name: c.Name, addr: c.Address, tls: conf, host: syslogHost(hostname()), pid: strconv.Itoa(os.Getpid())}, nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// syslogHost is the HOSTNAME mcpseal sends for the machine's name h: h
// where syslog parsers read it as a host (is5424Host, what a copy's
// check takes), NILVALUE otherwise (a name with '_' or a trailing '.').
func syslogHost(h string) string {
	if !is5424Host([]byte(h)) {
		return "-"
	}
	return h
}

// printUS keeps PRINTUSASCII (33..126), at most n bytes; "-" when empty.
func printUS(s string, n int) string {
	var b []byte
	for i := 0; i < len(s) && len(b) < n; i++ {
		if c := s[i]; c >= 33 && c <= 126 {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "-"
	}
	return string(b)
}

// message is one RFC 5424 message for a line.
func (s *syslog) message(l audit.Line) []byte {
	op, sev := lineMember(l.Raw, "op"), severity(l)
	// RFC 5424's TIME-SECFRAC is at most six digits: rsyslog before
	// 8.2606 mangles a seventh to ninth when it writes the time again.
	ts := "-"
	if t, err := time.Parse(time.RFC3339Nano, lineMember(l.Raw, "time")); err == nil {
		ts = t.Format("2006-01-02T15:04:05.999999Z07:00")
	}
	b := make([]byte, 0, len(l.Raw)+256)
	b = append(b, '<')
	b = strconv.AppendInt(b, int64(facilityLocal0*8+sev), 10)
	b = append(b, ">1 "+ts+" "+s.host+" mcpseal "+s.pid+" "+printUS(op, 32)+" ["+sdID+` seq="`...)
	b = strconv.AppendInt(b, l.Seq, 10)
	b = append(b, `" prev="`+l.Prev+`" hash="`+l.Hash+`"] `...)
	return append(b, l.Raw...)
}

// severity is notice for refusals, drifts, gaps and withheld
// definitions, informational otherwise.
func severity(l audit.Line) int {
	switch lineMember(l.Raw, "outcome") {
	case "refused", "withheld", "declined", "failed", "warned":
		return sevNotice
	}
	if op := lineMember(l.Raw, "op"); op == "drift" || op == "gap" {
		return sevNotice
	}
	return sevInfo
}

// lineMember reads a short string member of an audit line (whose members
// are plain: no escapes, a fixed order), "" when absent.
func lineMember(raw []byte, key string) string {
	k := []byte(`"` + key + `":"`)
	i := bytes.Index(raw, k)
	if i < 0 {
		return ""
	}
	rest := raw[i+len(k):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || j > 64 {
		return ""
	}
	return string(rest[:j])
}

func (s *syslog) send(ctx context.Context, lines []audit.Line) error {
	if s.conn == nil {
		d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: sendTimeout}, Config: s.tls}
		c, err := d.DialContext(ctx, "tcp", s.addr)
		if err != nil {
			return fmt.Errorf("syslog: %w", err)
		}
		s.conn = c.(*tls.Conn)
	}
	var buf []byte
	for _, l := range lines {
		m := s.message(l)
		buf = strconv.AppendInt(buf, int64(len(m)), 10)
		buf = append(buf, ' ')
		buf = append(buf, m...)
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(sendTimeout))
	if _, err := s.conn.Write(buf); err != nil {
		s.close()
		return fmt.Errorf("syslog: %w", err)
	}
	if err := s.drained(ctx); err != nil {
		s.close()
		return err
	}
	return nil
}

// drained waits until the receiver's TCP acknowledged everything written
// (see syslogDrain); where that cannot be known it returns at once.
func (s *syslog) drained(ctx context.Context) error {
	deadline := time.Now().Add(syslogDrain)
	wait := syslogDrainPoll
	for {
		n, ok := unacked(s.conn.NetConn())
		if !ok || n == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("syslog: the receiver's TCP did not acknowledge the batch in time")
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		wait = min(wait*2, 100*time.Millisecond)
	}
}

func (s *syslog) close() {
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
}

// resendOnReconnect: see syslogResend. A new process's first connection
// resends too: the last one's may have broken with events in flight.
func (s *syslog) resendOnReconnect() int64 {
	if s.conn == nil {
		return syslogResend
	}
	return 0
}
