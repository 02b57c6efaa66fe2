package policy

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/mcpseal/mcpseal/canon"
)

// This file is the receipt format: a provider's decision, signed with
// Ed25519 over the RFC 8785 canonical JSON of the receipt object. An http
// provider answers with an envelope
//
//	{"receipt": {...}, "signature": "<standard base64 of the 64-byte signature>"}
//
// and the receipt object has exactly these members:
//
//	v           1
//	type        "mcpseal.preflight.receipt"
//	decision    allow | warn | require_confirmation | block | unsupported
//	stage       the request's stage
//	subject     hex SHA-256 of the canonical JSON of the request's subject
//	nonce       the request's nonce (so an old receipt cannot be replayed)
//	issued_at   RFC 3339, UTC ("2026-11-02T09:00:00Z")
//	expires_at  RFC 3339, UTC, after issued_at
//	reason      optional: a code of 1 to 64 of [a-z0-9.-], never prose
//	kid         the id of the signing key, pinned in the host's policy
//
// Verification is offline: canonicalize the receipt member exactly as
// received (RFC 8785), check the signature with the pinned key named by
// kid, then check that stage, subject and nonce are the ones asked about
// and that now lies between issued_at (with one minute of clock skew) and
// expires_at. Any failure refuses. docs/preflight.md has a worked example
// and testdata/policy/receipts.json the vectors.

// ReceiptType is the receipt's type member.
const ReceiptType = "mcpseal.preflight.receipt"

// Bounds on receipts.
const (
	// maxReceiptBytes bounds an http provider's answer: a receipt is a few
	// hundred bytes.
	maxReceiptBytes = 16 << 10
	// receiptSkew is how far in the future issued_at may lie.
	receiptSkew = time.Minute
	// maxReceiptLife caps how long a receipt's decision is cached.
	maxReceiptLife = 24 * time.Hour
)

// Receipt is a provider's signed decision.
type Receipt struct {
	V         int      `json:"v"`
	Type      string   `json:"type"`
	Decision  Decision `json:"decision"`
	Stage     Stage    `json:"stage"`
	Subject   string   `json:"subject"`
	Nonce     string   `json:"nonce"`
	IssuedAt  string   `json:"issued_at"`
	ExpiresAt string   `json:"expires_at"`
	Reason    string   `json:"reason,omitempty"`
	KID       string   `json:"kid"`
}

var receiptMembers = []string{"v", "type", "decision", "stage", "subject", "nonce", "issued_at", "expires_at", "reason", "kid"}

// A ReceiptError says why a receipt is refused. Reason is one of the
// receipt-* codes.
type ReceiptError struct{ Reason string }

func (e *ReceiptError) Error() string { return "policy: receipt refused: " + e.Reason }

func receiptErr(reason string) error { return &ReceiptError{Reason: reason} }

// SignReceipt returns the envelope of r signed with key: what an http
// provider answers. r.KID must name key in the verifier's policy.
func SignReceipt(r Receipt, key ed25519.PrivateKey) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	c, err := canon.Transform(raw)
	if err != nil {
		return nil, err
	}
	sig := ed25519.Sign(key, c)
	return json.Marshal(struct {
		Receipt   json.RawMessage `json:"receipt"`
		Signature string          `json:"signature"`
	}{c, base64.StdEncoding.EncodeToString(sig)})
}

// ParseReceipt checks an envelope's form and signature against the pinned
// keys, and returns the receipt and its reference. It does not check what
// the receipt is about or when: see Receipt.Check. Errors are
// *ReceiptError values.
func ParseReceipt(body []byte, keys map[string]ed25519.PublicKey) (Receipt, *ReceiptRef, error) {
	var r Receipt
	if len(body) > maxReceiptBytes {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	c, err := canon.Transform(body)
	if err != nil {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	env, err := exactMembers(c, "receipt", "signature")
	if err != nil || env["receipt"] == nil || env["signature"] == nil {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	rc := []byte(env["receipt"]) // canonical already: a member of canonical JSON
	members, err := exactMembers(rc, receiptMembers...)
	if err != nil {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	if err := json.Unmarshal(rc, &r); err != nil || r.V != 1 || r.Type != ReceiptType || members["kid"] == nil {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	var sigText string
	if err := json.Unmarshal(env["signature"], &sigText); err != nil {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(sigText)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	key, ok := keys[r.KID]
	if !ok {
		return r, nil, receiptErr(ReasonReceiptUnknownKey)
	}
	if !ed25519.Verify(key, rc, sig) {
		return r, nil, receiptErr(ReasonReceiptForged)
	}
	if !r.Decision.valid() || !r.Stage.valid() || r.Reason != "" && !isCode(r.Reason) {
		return r, nil, receiptErr(ReasonReceiptMalformed)
	}
	sum := sha256.Sum256(rc)
	ref := &ReceiptRef{Kind: ReceiptType, Decision: r.Decision, SHA256: hex.EncodeToString(sum[:]), Signature: SignatureRef{KID: r.KID}}
	return r, ref, nil
}

// Check verifies that r answers the question asked (stage, subject
// digest, nonce) and is valid at now. It returns when the decision
// expires, capped at 24 hours from now.
func (r Receipt) Check(stage Stage, subject, nonce string, now time.Time) (time.Time, error) {
	if r.Stage != stage || r.Subject != subject || r.Nonce != nonce {
		return time.Time{}, receiptErr(ReasonReceiptMismatch)
	}
	issued, err1 := time.Parse(time.RFC3339, r.IssuedAt)
	expires, err2 := time.Parse(time.RFC3339, r.ExpiresAt)
	if err1 != nil || err2 != nil || !expires.After(issued) {
		return time.Time{}, receiptErr(ReasonReceiptMalformed)
	}
	if issued.After(now.Add(receiptSkew)) || !now.Before(expires) {
		return time.Time{}, receiptErr(ReasonReceiptExpired)
	}
	return minTime(expires, now.Add(maxReceiptLife)), nil
}

// exactMembers decodes a canonical object and refuses any member whose
// name is not in allowed, spelled exactly.
func exactMembers(c []byte, allowed ...string) (map[string]json.RawMessage, error) {
	if len(c) == 0 || c[0] != '{' {
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(c))
	if err := dec.Decode(&m); err != nil {
		return nil, errNotIJSON
	}
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return nil, errNotObject
		}
	}
	return m, nil
}

// isCode reports whether s is a stable code: 1 to 64 of [a-z0-9.-],
// starting with a letter or digit.
func isCode(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[0] == '.' {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
