package policy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/mcpseal/mcpseal/canon"
	"github.com/mcpseal/mcpseal/contract"
)

// This file builds what a provider is asked: one JSON object per hook,
// written to a command provider's stdin or POSTed to an http provider.
//
//	{"v": 1, "type": "mcpseal.preflight.request", "stage": "before_tool_call",
//	 "nonce": "<32 hex>", "subject": {...}}
//
// The subject never holds tool arguments or results. A command provider (a
// local program the host configured) sees a stdio server's full argv and
// an http server's full URL; an http provider, across the network, sees
// only the program's base name, the URL's origin, and SHA-256 digests of
// the argv and the URL, because both may carry tokens.

// RequestType is the request's type member.
const RequestType = "mcpseal.preflight.request"

// Request is one hook's question to a provider.
type Request struct {
	V       int     `json:"v"`
	Type    string  `json:"type"`
	Stage   Stage   `json:"stage"`
	Nonce   string  `json:"nonce"`
	Subject Subject `json:"subject"`
}

// Subject is what the question is about.
type Subject struct {
	Server ServerSubject `json:"server"`
	// Contract is the verified contract's digest (after_connect).
	Contract string `json:"contract,omitempty"`
	// Definitions lists the verified definitions (after_connect).
	Definitions []DefinitionRef `json:"definitions,omitempty"`
	// Tool is the tool about to be called (before_tool_call).
	Tool *ToolSubject `json:"tool,omitempty"`
}

// ServerSubject identifies the server.
type ServerSubject struct {
	ID        string    `json:"id"`
	Label     string    `json:"label"`
	Transport Transport `json:"transport"`
	// Command is the full argv (command providers only).
	Command []string `json:"command,omitempty"`
	// Program is the base name of argv[0].
	Program string `json:"program,omitempty"`
	// CommandDigest is the hex SHA-256 of the argv as a JSON array.
	CommandDigest string `json:"command_digest,omitempty"`
	// URL is the full endpoint (command providers only).
	URL string `json:"url,omitempty"`
	// Origin is scheme://host[:port] of the endpoint.
	Origin string `json:"origin,omitempty"`
	// Host is the endpoint's host name, the unit most providers judge.
	Host string `json:"host,omitempty"`
	// URLDigest is the hex SHA-256 of the full endpoint URL.
	URLDigest string `json:"url_digest,omitempty"`
}

// DefinitionRef names one verified definition.
type DefinitionRef struct {
	Kind   contract.Kind `json:"kind"`
	Name   string        `json:"name"`
	Digest string        `json:"digest"`
}

// ToolSubject is the tool of a before_tool_call question.
type ToolSubject struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Annotations are the verified definition's annotations: as pinned,
	// except under Drift.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Drift is set when the gate forwards a contract that drifted from its
	// pin (the monitor posture). Digest and Annotations above are then the
	// server's current definition, and Drift names the pinned one.
	Drift *ToolDrift `json:"drift,omitempty"`
}

// ToolDrift is the pinned definition of a tool called under a drift.
type ToolDrift struct {
	// Pinned is false when the pin has no such tool (it is new); Digest
	// and Annotations are then empty.
	Pinned      bool            `json:"pinned"`
	Digest      string          `json:"digest,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// newRequest builds the request for stage; local selects what a local
// command provider may see.
func newRequest(stage Stage, s Server, sub Subject, local bool) *Request {
	sub.Server = serverSubject(s, local)
	return &Request{V: 1, Type: RequestType, Stage: stage, Nonce: newNonce(), Subject: sub}
}

func serverSubject(s Server, local bool) ServerSubject {
	ss := ServerSubject{ID: s.ID, Label: s.Label, Transport: s.Transport}
	if len(s.Command) > 0 {
		argv, _ := json.Marshal(s.Command)
		ss.CommandDigest = sha256Hex(argv)
		base := s.Command[0]
		if i := strings.LastIndexAny(base, `/\`); i >= 0 {
			base = base[i+1:]
		}
		ss.Program = contract.SafeName(base)
		if local {
			ss.Command = s.Command
		}
	}
	if s.URL != "" {
		ss.URLDigest = sha256Hex([]byte(s.URL))
		if u, err := url.Parse(s.URL); err == nil && u.Host != "" {
			ss.Origin = u.Scheme + "://" + u.Host
			ss.Host = u.Hostname()
		}
		if local {
			ss.URL = s.URL
		}
	}
	return ss
}

// body returns the request's JSON and the digest of its subject's
// canonical form, which a receipt must name.
func (r *Request) body() (body []byte, subject string, err error) {
	body, err = json.Marshal(r)
	if err != nil {
		return nil, "", err
	}
	sub, err := json.Marshal(r.Subject)
	if err != nil {
		return nil, "", err
	}
	d, err := canon.Digest(sub)
	if err != nil {
		return nil, "", err
	}
	return body, d, nil
}

// SubjectDigest returns the hex SHA-256 of the canonical JSON of a
// request body's subject member: what a receipt's subject must be. A
// provider may use it to answer; mcpseal computes it from what it sent.
func SubjectDigest(requestBody []byte) (string, error) {
	c, err := canon.Transform(requestBody)
	if err != nil {
		return "", err
	}
	m, err := topMembers(c, "subject")
	if err != nil || m["subject"] == nil {
		return "", errNotObject
	}
	return sha256Hex(m["subject"]), nil
}

func newNonce() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
