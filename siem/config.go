package siem

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Config is the export file ($MCPSEAL_HOME/audit-export.json):
//
//	{"version": 1,
//	 "spool_events": 50000,
//	 "sinks": {
//	   "siem": {"type": "syslog", "address": "siem.example:6514", "ca_file": "/etc/mcpseal/siem-ca.pem"},
//	   "hook": {"type": "webhook", "url": "https://hooks.example/audit", "hmac_key_file": "/etc/mcpseal/hook.key"}}}
//
// syslog members: address (host:port, required), ca_file (PEM roots; the
// system's when absent), cert_file and key_file (a client certificate),
// server_name (the name the certificate must carry; the address's host
// by default). otlp members: endpoint (the collector's URL, https or
// loopback http; /v1/logs is added to a URL without a path for
// http/protobuf), protocol (http/protobuf, the default, or grpc), ca_file.
// webhook members: url (https, or http to a loopback
// address), and exactly one of hmac_key_file (at least 32 bytes) or
// ed25519_key_file (an OpenSSH Ed25519 private key, as 'mcpseal key
// generate' writes).
//
// The file is read strictly: an unknown or repeated key, a wrong type or
// a missing required member is an error, never a default.
type Config struct {
	SpoolEvents int64
	Sinks       []SinkConfig
}

// SinkConfig is one sink.
type SinkConfig struct {
	Name string
	Type string // syslog or webhook

	Address, CAFile, CertFile, KeyFile, ServerName string // syslog

	Endpoint, Protocol string // otlp

	URL            string // webhook
	HMACKey        []byte
	Ed25519Key     ed25519.PrivateKey
	HMACKeyFile    string
	Ed25519KeyFile string
}

// Bounds of the export file and what it names.
const (
	maxConfigBytes = 64 << 10
	maxKeyFile     = 64 << 10
	maxSinks       = 8
	// DefaultSpoolEvents: a few hours of a busy agent, and well under
	// what the audit log keeps by default (8 files of 8 MiB, about
	// 200,000 events), so a spool fills before rotation could prune an
	// event a sink has not taken.
	DefaultSpoolEvents = 50000
	maxSpoolEvents     = 10_000_000
)

// ReadConfig reads the export file at path.
func ReadConfig(path string) (*Config, error) {
	data, err := atomicfile.ReadFileFollow(path, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("audit export file: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("audit export file %s: %w", path, err)
	}
	for i := range c.Sinks {
		if err := c.Sinks[i].loadKeys(); err != nil {
			return nil, fmt.Errorf("audit export file %s: sink %s: %w", path, c.Sinks[i].Name, err)
		}
	}
	return c, nil
}

func validSinkName(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

// ParseConfig reads the export file's bytes (keys are not loaded).
func ParseConfig(data []byte) (*Config, error) {
	top, err := object(data, "the file", "version", "spool_events", "sinks")
	if err != nil {
		return nil, err
	}
	if v, ok := top["version"]; !ok || string(v) != "1" {
		return nil, errors.New("version must be 1")
	}
	c := &Config{SpoolEvents: DefaultSpoolEvents}
	if v, ok := top["spool_events"]; ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || n < 1 || n > maxSpoolEvents {
			return nil, fmt.Errorf("spool_events must be an integer from 1 to %d", maxSpoolEvents)
		}
		c.SpoolEvents = n
	}
	raw, ok := top["sinks"]
	if !ok {
		return nil, errors.New("sinks is required")
	}
	ms, err := jsonrpc.Members(raw)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("sinks must be an object without repeated keys")
	}
	if len(ms) == 0 || len(ms) > maxSinks {
		return nil, fmt.Errorf("sinks must name 1 to %d sinks", maxSinks)
	}
	for _, m := range ms {
		if !validSinkName(m.Key) {
			return nil, errors.New("a sink name must be 1 to 32 of [a-z0-9-], not starting with -")
		}
		s, err := parseSink(m.Key, m.Value)
		if err != nil {
			return nil, fmt.Errorf("sink %s: %w", m.Key, err)
		}
		c.Sinks = append(c.Sinks, s)
	}
	return c, nil
}

func parseSink(name string, raw []byte) (SinkConfig, error) {
	s := SinkConfig{Name: name}
	m, err := object(raw, "the sink", "type", "address", "ca_file", "cert_file", "key_file", "server_name", "url", "hmac_key_file", "ed25519_key_file", "endpoint", "protocol")
	if err != nil {
		return s, err
	}
	str := func(key string, required bool) (string, error) {
		v, ok := m[key]
		if !ok {
			if required {
				return "", fmt.Errorf("%s is required", key)
			}
			return "", nil
		}
		out, err := jsonrpc.DecodeString(v)
		if err != nil || out == "" {
			return "", fmt.Errorf("%s must be a non-empty string", key)
		}
		delete(m, key)
		return out, nil
	}
	if s.Type, err = str("type", true); err != nil {
		return s, err
	}
	switch s.Type {
	case "syslog":
		if s.Address, err = str("address", true); err != nil {
			return s, err
		}
		if _, port, err := net.SplitHostPort(s.Address); err != nil || port == "" {
			return s, errors.New("address must be host:port")
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"ca_file", &s.CAFile}, {"cert_file", &s.CertFile}, {"key_file", &s.KeyFile}, {"server_name", &s.ServerName}} {
			if *f.dst, err = str(f.key, false); err != nil {
				return s, err
			}
		}
		if (s.CertFile == "") != (s.KeyFile == "") {
			return s, errors.New("cert_file and key_file go together")
		}
	case "webhook":
		if s.URL, err = str("url", true); err != nil {
			return s, err
		}
		if err := checkWebhookURL(s.URL); err != nil {
			return s, err
		}
		if s.HMACKeyFile, err = str("hmac_key_file", false); err != nil {
			return s, err
		}
		if s.Ed25519KeyFile, err = str("ed25519_key_file", false); err != nil {
			return s, err
		}
		if (s.HMACKeyFile == "") == (s.Ed25519KeyFile == "") {
			return s, errors.New("a webhook needs exactly one of hmac_key_file or ed25519_key_file: an unsigned batch proves nothing")
		}
	case "otlp":
		if s.Endpoint, err = str("endpoint", true); err != nil {
			return s, err
		}
		if err := checkWebhookURL(s.Endpoint); err != nil {
			return s, errors.New("endpoint must be https (plain http only to a loopback address)")
		}
		if s.Protocol, err = str("protocol", false); err != nil {
			return s, err
		}
		switch s.Protocol {
		case "":
			s.Protocol = "http/protobuf"
		case "http/protobuf", "grpc":
		default:
			return s, errors.New("protocol must be http/protobuf or grpc")
		}
		if s.CAFile, err = str("ca_file", false); err != nil {
			return s, err
		}
	default:
		return s, errors.New("type must be syslog, webhook or otlp")
	}
	if len(m) > 0 {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return s, fmt.Errorf("%s does not belong in a %s sink", keys[0], s.Type)
	}
	return s, nil
}

// checkWebhookURL: https, or plain http to a loopback address only; no
// user information (credentials belong in the key, not the URL).
func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("url must be an absolute https URL without user information")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return errors.New("url must be https (plain http only to a loopback address)")
}

// object reads a JSON object whose keys must be among allowed and not
// repeated, into raw values.
func object(raw []byte, what string, allowed ...string) (map[string][]byte, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object", what)
	}
	ms, err := jsonrpc.Members(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not one unambiguous JSON object (a repeated key, or invalid JSON)", what)
	}
	out := make(map[string][]byte, len(ms))
	for _, m := range ms {
		if !slices.Contains(allowed, m.Key) {
			return nil, fmt.Errorf("%s has an unknown key %q", what, safeKey(m.Key))
		}
		out[m.Key] = m.Value
	}
	return out, nil
}

// safeKey shows at most 32 bytes of a key in [a-z_], for an error message.
func safeKey(k string) string {
	var b []byte
	for i := 0; i < len(k) && len(b) < 32; i++ {
		if c := k[i]; 'a' <= c && c <= 'z' || c == '_' {
			b = append(b, c)
		} else {
			b = append(b, '?')
		}
	}
	return string(b)
}

// loadKeys reads the webhook's signing key.
func (s *SinkConfig) loadKeys() error {
	switch {
	case s.HMACKeyFile != "":
		k, err := atomicfile.ReadFileFollow(s.HMACKeyFile, maxKeyFile)
		if err != nil {
			return fmt.Errorf("hmac_key_file: %w", err)
		}
		for len(k) > 0 && (k[len(k)-1] == '\n' || k[len(k)-1] == '\r') {
			k = k[:len(k)-1]
		}
		if len(k) < 32 {
			return errors.New("hmac_key_file must hold at least 32 bytes")
		}
		s.HMACKey = k
	case s.Ed25519KeyFile != "":
		pem, err := atomicfile.ReadFileFollow(s.Ed25519KeyFile, maxKeyFile)
		if err != nil {
			return fmt.Errorf("ed25519_key_file: %w", err)
		}
		k, err := ssh.ParseRawPrivateKey(pem)
		if err != nil {
			return errors.New("ed25519_key_file is not an unencrypted OpenSSH private key")
		}
		switch p := k.(type) {
		case *ed25519.PrivateKey:
			s.Ed25519Key = *p
		case ed25519.PrivateKey:
			s.Ed25519Key = p
		default:
			return errors.New("ed25519_key_file is not an Ed25519 key")
		}
	}
	return nil
}
