package siem

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

func init() {
	pollInterval, minBackoff, maxBackoff = 20*time.Millisecond, 20*time.Millisecond, 100*time.Millisecond
}

// newLog returns a home whose audit log holds n events (small files, so
// the stream crosses rotations).
func newLog(t *testing.T, n int) (string, *audit.Log) {
	t.Helper()
	home := t.TempDir()
	lg, err := audit.Open(home, audit.Options{MaxFileBytes: 16 << 10, MaxFiles: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	appendEvents(t, lg, n)
	return home, lg
}

func appendEvents(t *testing.T, lg *audit.Log, n int) {
	t.Helper()
	evs := make([]audit.Event, n)
	for i := range evs {
		evs[i] = audit.Event{Op: audit.OpCall, Outcome: audit.Allowed, Server: "3f9a0c1d2b4e5f60", Label: "memory", Tool: "echo", Bytes: int64(i)}
		if i%7 == 0 {
			evs[i].Outcome, evs[i].Code = audit.Refused, "denied"
		}
	}
	if err := lg.AppendAll(evs); err != nil {
		t.Fatal(err)
	}
}

var hmacKey = []byte("0123456789abcdef0123456789abcdef-test")

// webhookReceiver stores every batch body it accepts, verifying its
// signature; fail says how to treat the next requests.
type webhookReceiver struct {
	mu      sync.Mutex
	bodies  [][]byte
	fail    int // refuse this many requests with 503
	lose    int // then store this many but answer 500 (a lost acknowledgement)
	badSigs int
	pub     ed25519.PublicKey
}

func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	sig := req.Header.Get(HeaderSignature)
	ok := false
	if r.pub != nil {
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "ed25519="))
		ok = err == nil && strings.HasPrefix(sig, "ed25519=") && ed25519.Verify(r.pub, body, b)
	} else {
		m := hmac.New(sha256.New, hmacKey)
		m.Write(body)
		ok = hmac.Equal([]byte(sig), []byte("hmac-sha256="+hex.EncodeToString(m.Sum(nil))))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.badSigs++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if r.fail > 0 {
		r.fail--
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	r.bodies = append(r.bodies, body)
	if r.lose > 0 {
		r.lose--
		http.Error(w, "stored, but the answer is lost", http.StatusInternalServerError)
	}
}

func (r *webhookReceiver) copy() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(bytes.Join(r.bodies, []byte("\n")), '\n')
}

// inChainOrder checks that the first arrival of each seq runs 1..n in order
// and returns how many arrivals were repeats.
func inChainOrder(t *testing.T, lines [][]byte, n int) (dups int) {
	t.Helper()
	seen := map[int64]bool{}
	var next int64 = 1
	for _, l := range lines {
		seq, ok := seqOf(l)
		if !ok {
			t.Fatalf("not an event: %.80s", l)
		}
		if seen[seq] {
			dups++
			continue
		}
		if seq != next {
			t.Fatalf("event %d arrived first where %d was due", seq, next)
		}
		seen[seq] = true
		next++
	}
	if int(next-1) != n {
		t.Fatalf("%d distinct events arrived, want %d", next-1, n)
	}
	return dups
}

var seqRE = regexp.MustCompile(`^\{"v":1,"seq":(\d+),`)

func seqOf(l []byte) (int64, bool) {
	m := seqRE.FindSubmatch(l)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	return n, err == nil
}

func webhookConfig(url string, spool int64) *Config {
	return &Config{SpoolEvents: spool, Sinks: []SinkConfig{{Name: "hook", Type: "webhook", URL: url, HMACKey: hmacKey}}}
}

// TestWebhookDownThenRecoversInChainOrder: a webhook that refuses, then
// stores batches without acknowledging them, then recovers, gets every
// event, in chain order, none lost; repeats are exact and de-duplicate by
// seq; the copy verifies against the local chain, and dropping one batch
// from it is a gap, changing one event a rewrite.
func TestWebhookDownThenRecoversInChainOrder(t *testing.T) {
	t.Parallel()
	home, lg := newLog(t, 300)
	recv := &webhookReceiver{fail: 3, lose: 1}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ex, err := Start(home, webhookConfig(srv.URL, DefaultSpoolEvents), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	appendEvents(t, lg, 400) // events keep coming while the sink is down
	ex.Kick()
	if err := ex.Ship(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if recv.badSigs != 0 {
		t.Fatalf("%d batches with a bad signature", recv.badSigs)
	}
	copyBytes := recv.copy()
	lines, err := ParseCopy(copyBytes)
	if err != nil {
		t.Fatal(err)
	}
	if dups := inChainOrder(t, lines, 700); dups == 0 {
		t.Error("the batch whose acknowledgement was lost was not sent again")
	}
	rep, err := audit.CheckStream(home, lines)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Events != 700 || rep.Duplicates == 0 {
		t.Fatalf("the receiver's copy does not verify: %+v", rep)
	}

	// The attacker drops one batch on the way (or at the receiver).
	bodies := bytes.Split(bytes.TrimSpace(copyBytes), []byte("\n"))
	if len(bodies) < 4 {
		t.Fatalf("%d batches; the test needs a middle one that is no repeat", len(bodies))
	}
	var dropped [][]byte
	for i, b := range bodies {
		if i != len(bodies)-2 { // not the first (sent twice), not the last
			dropped = append(dropped, b)
		}
	}
	lines, _ = ParseCopy(bytes.Join(dropped, []byte("\n")))
	rep, _ = audit.CheckStream(home, lines)
	if !hasFault(rep, "gap") {
		t.Errorf("a dropped batch is not a gap: %+v", rep.Faults)
	}

	// The attacker rewrites one event in the copy.
	tampered := bytes.Replace(copyBytes, []byte(`"outcome":"refused"`), []byte(`"outcome":"allowed"`), 1)
	lines, _ = ParseCopy(tampered)
	rep, _ = audit.CheckStream(home, lines)
	if !hasFault(rep, "rewrite") {
		t.Errorf("a rewritten event is not a rewrite: %+v", rep.Faults)
	}
}

func hasFault(r *audit.StreamReport, reason string) bool {
	for _, f := range r.Faults {
		if f.Reason == reason {
			return true
		}
	}
	return false
}

// TestWebhookEd25519Signature: batches are signed with the OpenSSH key
// and verify with its public key.
func TestWebhookEd25519Signature(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 10)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	recv := &webhookReceiver{pub: pub}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	cfg := &Config{SpoolEvents: 100, Sinks: []SinkConfig{{Name: "ed", Type: "webhook", URL: srv.URL, Ed25519Key: priv}}}
	ex, err := Start(home, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if err := ex.Ship(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if recv.badSigs != 0 || len(recv.bodies) == 0 {
		t.Fatalf("bad signatures %d, batches %d", recv.badSigs, len(recv.bodies))
	}
}

// TestSpoolFullWhenTheSinkStaysDown: with the sink down, more events than
// the spool holds make it full, and it empties when the sink returns.
func TestSpoolFullWhenTheSinkStaysDown(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 50)
	recv := &webhookReceiver{fail: 1 << 30}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ex, err := Start(home, webhookConfig(srv.URL, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if !ex.Full() {
		t.Fatal("50 events wait for a sink whose spool holds 10: not full")
	}
	recv.mu.Lock()
	recv.fail = 0
	recv.mu.Unlock()
	if err := ex.Ship(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ex.Full() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ex.Full() {
		t.Fatal("the spool is still full after the sink caught up")
	}
}

// TestOneShipperPerSink: two processes' exporters on one log; one ships,
// so no batch is sent twice.
func TestOneShipperPerSink(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 600)
	recv := &webhookReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	var exs []*Exporter
	for range 2 {
		ex, err := Start(home, webhookConfig(srv.URL, DefaultSpoolEvents), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ex.Close()
		exs = append(exs, ex)
	}
	if err := exs[0].Ship(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	lines, _ := ParseCopy(recv.copy())
	if dups := inChainOrder(t, lines, 600); dups != 0 {
		t.Fatalf("%d events sent twice by two shippers", dups)
	}
}

// tlsFiles writes a self-signed certificate for 127.0.0.1.
func tlsFiles(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "siem"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

// syslogReceiver reads RFC 5425 frames (octet counting) of RFC 5424
// messages and keeps each message.
type syslogReceiver struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (r *syslogReceiver) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				lenStr, err := br.ReadString(' ')
				if err != nil {
					return
				}
				n, err := strconv.Atoi(strings.TrimSuffix(lenStr, " "))
				if err != nil || n <= 0 || n > 1<<20 {
					return
				}
				msg := make([]byte, n)
				if _, err := io.ReadFull(br, msg); err != nil {
					return
				}
				r.mu.Lock()
				r.msgs = append(r.msgs, msg)
				r.mu.Unlock()
			}
		}()
	}
}

var syslogRE = regexp.MustCompile(`^<(13[34])>1 \S+ \S+ mcpseal \d+ (call|list|connect) \[mcpseal@32473 seq="(\d+)" prev="([0-9a-f]{64})" hash="([0-9a-f]{64})"\] (\{.*\})$`)

// TestSyslogTLSDownThenUp: events appended while the TLS syslog receiver
// is down all arrive, in chain order, once it listens; each message is
// RFC 5424 with the chain position in its structured data, and the
// receiver's copy verifies.
func TestSyslogTLSDownThenUp(t *testing.T) {
	t.Parallel()
	home, lg := newLog(t, 400)
	cert, ca := tlsFiles(t)
	l0, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l0.Addr().String()
	l0.Close() // down
	cfg := &Config{SpoolEvents: DefaultSpoolEvents, Sinks: []SinkConfig{{Name: "siem", Type: "syslog", Address: addr, CAFile: ca}}}
	ex, err := Start(home, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	time.Sleep(100 * time.Millisecond)
	appendEvents(t, lg, 100)
	l, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recv := &syslogReceiver{}
	go recv.serve(l)
	if err := ex.Ship(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		recv.mu.Lock()
		n := len(recv.msgs)
		recv.mu.Unlock()
		if n >= 500 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	var stored bytes.Buffer
	var lines [][]byte
	for _, m := range recv.msgs {
		g := syslogRE.FindSubmatch(m)
		if g == nil {
			t.Fatalf("not the RFC 5424 message mcpseal sends: %.120s", m)
		}
		line := g[6]
		if sum := sha256.Sum256(line); hex.EncodeToString(sum[:]) != string(g[5]) || !bytes.Contains(line, []byte(`"prev":"`+string(g[4])+`"`)) {
			t.Fatalf("structured data does not match event %s", g[3])
		}
		if seq, _ := seqOf(line); strconv.FormatInt(seq, 10) != string(g[3]) {
			t.Fatalf("seq %s in the structured data, %d in the event", g[3], seq)
		}
		lines = append(lines, line)
		stored.Write(m)
		stored.WriteByte('\n')
	}
	inChainOrder(t, lines, 500)
	parsed, err := ParseCopy(stored.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.CheckStream(home, parsed)
	if err != nil || !rep.OK() || rep.Events != 500 {
		t.Fatalf("the syslog copy does not verify: %+v %v", rep, err)
	}
}

// TestCheckStreamFindsLocalRemoval: events the receiver holds that the
// local log lost from its end (an attacker covering tracks) are faults.
func TestCheckStreamFindsLocalRemoval(t *testing.T) {
	t.Parallel()
	home, _ := newLog(t, 20)
	lines, _, err := audit.ReadAfter(home, 0, 100)
	if err != nil || len(lines) != 20 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	var raws [][]byte
	for _, l := range lines {
		raws = append(raws, l.Raw)
	}
	// A copy that goes further than the local log: forge event 21 on top.
	extra := []byte(fmt.Sprintf(`{"v":1,"seq":21,"time":"2026-01-01T00:00:00Z","op":"call","outcome":"allowed","prev":"%s"}`, lines[19].Hash))
	rep, err := audit.CheckStream(home, append(raws, extra))
	if err != nil {
		t.Fatal(err)
	}
	if !hasFault(rep, "missing") {
		t.Fatalf("an event the local log does not hold is not a fault: %+v", rep)
	}
}
