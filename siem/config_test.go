package siem

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "siem", "audit", "jsonrpc", "contract", "canon", "internal/atomicfile", "internal/otlp", "internal/pbwire")
}

const goodConfig = `{"version": 1, "spool_events": 100, "sinks": {
  "siem": {"type": "syslog", "address": "127.0.0.1:6514", "ca_file": "/ca.pem"},
  "hook": {"type": "webhook", "url": "https://hooks.example/audit", "hmac_key_file": "/k"}}}`

func TestParseConfig(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.SpoolEvents != 100 || len(c.Sinks) != 2 || c.Sinks[0].Name != "siem" || c.Sinks[0].CAFile != "/ca.pem" || c.Sinks[1].URL != "https://hooks.example/audit" {
		t.Fatalf("%+v", c)
	}
	for name, bad := range map[string]string{
		"repeated key":        `{"version": 1, "version": 1, "sinks": {"a": {"type": "syslog", "address": "h:1"}}}`,
		"repeated sink":       `{"version": 1, "sinks": {"a": {"type": "syslog", "address": "h:1"}, "a": {"type": "syslog", "address": "h:2"}}}`,
		"unknown key":         `{"version": 1, "sinks": {"a": {"type": "syslog", "address": "h:1", "adress": "x"}}}`,
		"case-folded key":     `{"Version": 1, "sinks": {"a": {"type": "syslog", "address": "h:1"}}}`,
		"wrong version":       `{"version": 2, "sinks": {"a": {"type": "syslog", "address": "h:1"}}}`,
		"version as string":   `{"version": "1", "sinks": {"a": {"type": "syslog", "address": "h:1"}}}`,
		"no sinks":            `{"version": 1, "sinks": {}}`,
		"unsigned webhook":    `{"version": 1, "sinks": {"a": {"type": "webhook", "url": "https://h/x"}}}`,
		"two signers":         `{"version": 1, "sinks": {"a": {"type": "webhook", "url": "https://h/x", "hmac_key_file": "k", "ed25519_key_file": "e"}}}`,
		"plain http remote":   `{"version": 1, "sinks": {"a": {"type": "webhook", "url": "http://h.example/x", "hmac_key_file": "k"}}}`,
		"user in url":         `{"version": 1, "sinks": {"a": {"type": "webhook", "url": "https://u:p@h/x", "hmac_key_file": "k"}}}`,
		"syslog member wrong": `{"version": 1, "sinks": {"a": {"type": "webhook", "url": "https://h/x", "hmac_key_file": "k", "address": "h:1"}}}`,
		"bad name":            `{"version": 1, "sinks": {"../x": {"type": "syslog", "address": "h:1"}}}`,
		"no port":             `{"version": 1, "sinks": {"a": {"type": "syslog", "address": "h"}}}`,
		"spool zero":          `{"version": 1, "spool_events": 0, "sinks": {"a": {"type": "syslog", "address": "h:1"}}}`,
		"unknown type":        `{"version": 1, "sinks": {"a": {"type": "kafka", "address": "h:1"}}}`,
		"null":                `{"version": 1, "sinks": {"a": {"type": null, "address": "h:1"}}}`,
		"trailing":            `{"version": 1, "sinks": {"a": {"type": "syslog", "address": "h:1"}}} {}`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "adress") && name != "unknown key" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseConfigOTLP(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig([]byte(`{"version":1,"sinks":{"otel":{"type":"otlp","endpoint":"http://127.0.0.1:4317","protocol":"grpc"},"o2":{"type":"otlp","endpoint":"https://c.example"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sinks[0].Protocol != "grpc" || c.Sinks[1].Protocol != "http/protobuf" {
		t.Fatalf("%+v", c.Sinks)
	}
}

// TestReadConfigLoadsKeys: an HMAC key file and an OpenSSH Ed25519 key.
func TestReadConfigLoadsKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hk := filepath.Join(dir, "hook.key")
	os.WriteFile(hk, []byte(strings.Repeat("k", 40)+"\n"), 0o600)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	ek := filepath.Join(dir, "ed.key")
	os.WriteFile(ek, pem.EncodeToMemory(blk), 0o600)
	cfgPath := filepath.Join(dir, "audit-export.json")
	os.WriteFile(cfgPath, []byte(`{"version":1,"sinks":{"h":{"type":"webhook","url":"http://127.0.0.1:1/x","hmac_key_file":"`+hk+`"},
	  "e":{"type":"webhook","url":"http://127.0.0.1:1/y","ed25519_key_file":"`+ek+`"}}}`), 0o600)
	c, err := ReadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Sinks[0].HMACKey) != strings.Repeat("k", 40) || !c.Sinks[1].Ed25519Key.Equal(priv) {
		t.Fatal("keys not loaded")
	}
	os.WriteFile(hk, []byte("short"), 0o600)
	if _, err := ReadConfig(cfgPath); err == nil {
		t.Fatal("a short HMAC key was accepted")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Add([]byte(`{"version":1,"sinks":{"a":{"type":"webhook","url":"http://127.0.0.1/x","hmac_key_file":"k"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		for _, s := range c.Sinks {
			if !validSinkName(s.Name) || (s.Type != "syslog" && s.Type != "webhook") {
				t.Fatalf("accepted %+v", s)
			}
		}
	})
}

// FuzzParseCopy: a receiver's copy is anyone's bytes; parsing never
// panics and only yields lines that start as audit events.
func FuzzParseCopy(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":1,"time":"2026-01-01T00:00:00Z","op":"call","outcome":"allowed","prev":"` + strings.Repeat("0", 64) + `"}` + "\n"))
	f.Add([]byte(`{"v":1,"type":"mcpseal-audit-batch","events":[{"v":1,"seq":2}]}` + "\n"))
	f.Add([]byte(`<134>1 - h mcpseal 1 call [mcpseal@32473 seq="1"] {"v":1,"seq":1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ParseCopy(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if !strings.HasPrefix(string(l), `{"v":1,"seq":`) && !strings.HasPrefix(string(l), "{") {
				t.Fatalf("yielded %q", l)
			}
		}
	})
}
