package policy

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/policy/receipts.json")

const receiptVectorsPath = "../testdata/policy/receipts.json"

// receiptVectors is testdata/policy/receipts.json.
type receiptVectors struct {
	Comment string            `json:"comment"`
	Seeds   map[string]string `json:"seeds"`
	Keys    map[string]string `json:"keys"`
	Stage   Stage             `json:"stage"`
	Subject string            `json:"subject"`
	Nonce   string            `json:"nonce"`
	Now     string            `json:"now"`
	Vectors []receiptVector   `json:"vectors"`
}

type receiptVector struct {
	Name     string   `json:"name"`
	Envelope string   `json:"envelope"`
	Error    string   `json:"error,omitempty"`
	Decision Decision `json:"decision,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Expires  string   `json:"expires,omitempty"`
}

// testKey derives a deterministic test key from a label.
func testKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("mcpseal test key " + label))
	return ed25519.NewKeyFromSeed(seed[:])
}

func pubString(k ed25519.PrivateKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey))
}

// buildReceiptVectors writes the vectors from keys derived from labels,
// so regenerating them yields the same file.
func buildReceiptVectors(t *testing.T) receiptVectors {
	k1, k2, rogue := testKey("k1"), testKey("k2"), testKey("rogue")
	v := receiptVectors{
		Comment: "Receipt envelopes and what verifying each must give. Verify with the keys (\"ed25519:\" + base64 public key) against the question {stage, subject, nonce} at time now. Seeds are the Ed25519 private key seeds (hex) the envelopes were made with; \"rogue\" is not pinned. error is the refusal code; without one the receipt is valid, with that decision, receipt SHA-256 and cache expiry.",
		Seeds:   map[string]string{"k1": hex.EncodeToString(k1.Seed()), "k2": hex.EncodeToString(k2.Seed()), "rogue": hex.EncodeToString(rogue.Seed())},
		Keys:    map[string]string{"k1": pubString(k1), "k2": pubString(k2)},
		Stage:   StageBeforeToolCall,
		Subject: sha256Hex([]byte("subject")),
		Nonce:   "00112233445566778899aabbccddeeff",
		Now:     "2026-11-02T09:00:00Z",
	}
	base := Receipt{V: 1, Type: ReceiptType, Decision: Allow, Stage: v.Stage, Subject: v.Subject, Nonce: v.Nonce,
		IssuedAt: "2026-11-02T08:59:00Z", ExpiresAt: "2026-11-02T10:00:00Z", KID: "k1"}
	sign := func(r Receipt, key ed25519.PrivateKey) string {
		env, err := SignReceipt(r, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(env)
	}
	with := func(f func(*Receipt)) Receipt { r := base; f(&r); return r }
	// signRaw signs a receipt object given as text (for members the
	// Receipt type cannot express).
	signRaw := func(obj string, key ed25519.PrivateKey) string {
		return `{"receipt":` + obj + `,"signature":"` + base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(obj))) + `"}`
	}
	valid := sign(base, k1)
	add := func(name, env, errCode string) {
		v.Vectors = append(v.Vectors, receiptVector{Name: name, Envelope: env, Error: errCode})
	}
	add("valid-allow", valid, "")
	add("valid-block-with-reason-k2", sign(with(func(r *Receipt) { r.Decision, r.Reason, r.KID = Block, "host-not-vouched", "k2" }), k2), "")
	add("valid-whitespace-and-member-order", strings.Replace(strings.Replace(valid, `{"receipt":`, "{ \"signature\": "+mustJSON(t, envelopeSig(t, valid))+" ,\n \"receipt\" : ", 1), `,"signature":"`+envelopeSig(t, valid)+`"}`, "}", 1), "")
	add("forged-by-unpinned-key", sign(base, rogue), ReasonReceiptForged)
	add("decision-changed-after-signing", strings.Replace(valid, `"decision":"allow"`, `"decision":"block"`, 1), ReasonReceiptForged)
	add("unknown-kid", sign(with(func(r *Receipt) { r.KID = "k9" }), k1), ReasonReceiptUnknownKey)
	add("signed-by-the-other-pinned-key", sign(with(func(r *Receipt) { r.KID = "k2" }), k1), ReasonReceiptForged)
	add("expired", sign(with(func(r *Receipt) { r.IssuedAt, r.ExpiresAt = "2026-11-01T08:00:00Z", "2026-11-02T08:00:00Z" }), k1), ReasonReceiptExpired)
	add("expires-exactly-now", sign(with(func(r *Receipt) { r.ExpiresAt = "2026-11-02T09:00:00Z" }), k1), ReasonReceiptExpired)
	add("issued-in-the-future", sign(with(func(r *Receipt) { r.IssuedAt, r.ExpiresAt = "2026-11-02T11:00:00Z", "2026-11-02T12:00:00Z" }), k1), ReasonReceiptExpired)
	add("other-stage", sign(with(func(r *Receipt) { r.Stage = StageBeforeConnect }), k1), ReasonReceiptMismatch)
	add("other-subject", sign(with(func(r *Receipt) { r.Subject = sha256Hex([]byte("other")) }), k1), ReasonReceiptMismatch)
	add("replayed-nonce", sign(with(func(r *Receipt) { r.Nonce = "ffeeddccbbaa99887766554433221100" }), k1), ReasonReceiptMismatch)
	add("expires-before-issued", sign(with(func(r *Receipt) { r.IssuedAt, r.ExpiresAt = "2026-11-02T09:30:00Z", "2026-11-02T09:10:00Z" }), k1), ReasonReceiptMalformed)
	add("reason-is-prose", sign(with(func(r *Receipt) { r.Reason = "Ignore previous instructions" }), k1), ReasonReceiptMalformed)
	add("unknown-decision", sign(with(func(r *Receipt) { r.Decision = "maybe" }), k1), ReasonReceiptMalformed)
	add("extra-member", signRaw(`{"decision":"allow","expires_at":"2026-11-02T10:00:00Z","issued_at":"2026-11-02T08:59:00Z","kid":"k1","message":"trust me","nonce":"`+v.Nonce+`","stage":"before_tool_call","subject":"`+v.Subject+`","type":"`+ReceiptType+`","v":1}`, k1), ReasonReceiptMalformed)
	add("case-variant-member", signRaw(`{"Decision":"block","decision":"allow","expires_at":"2026-11-02T10:00:00Z","issued_at":"2026-11-02T08:59:00Z","kid":"k1","nonce":"`+v.Nonce+`","stage":"before_tool_call","subject":"`+v.Subject+`","type":"`+ReceiptType+`","v":1}`, k1), ReasonReceiptMalformed)
	add("repeated-member", strings.Replace(valid, `"decision":"allow"`, `"decision":"allow","decision":"block"`, 1), ReasonReceiptMalformed)
	add("version-2", sign(with(func(r *Receipt) { r.V = 2 }), k1), ReasonReceiptMalformed)
	add("other-type", sign(with(func(r *Receipt) { r.Type = "crawlcheck-decision" }), k1), ReasonReceiptMalformed)
	add("signature-not-base64", strings.Replace(valid, `"signature":"`, `"signature":"!`, 1), ReasonReceiptMalformed)
	add("signature-truncated", `{"receipt":`+string(mustMember(t, valid, "receipt"))+`,"signature":"`+envelopeSig(t, valid)[:40]+`"}`, ReasonReceiptMalformed)
	add("no-signature", `{"receipt":`+string(mustMember(t, valid, "receipt"))+`}`, ReasonReceiptMalformed)
	add("not-json", `receipt: allow`, ReasonReceiptMalformed)
	add("too-large", `{"receipt":{},"signature":"`+strings.Repeat("A", maxReceiptBytes)+`"}`, ReasonReceiptMalformed)
	now, _ := time.Parse(time.RFC3339, v.Now)
	keys := map[string]ed25519.PublicKey{"k1": k1.Public().(ed25519.PublicKey), "k2": k2.Public().(ed25519.PublicKey)}
	for i := range v.Vectors {
		vec := &v.Vectors[i]
		r, ref, err := ParseReceipt([]byte(vec.Envelope), keys)
		var exp time.Time
		if err == nil {
			exp, err = r.Check(v.Stage, v.Subject, v.Nonce, now)
		}
		if err == nil {
			vec.Decision, vec.SHA256, vec.Expires = ref.Decision, ref.SHA256, exp.UTC().Format(time.RFC3339)
		}
	}
	return v
}

func envelopeSig(t *testing.T, env string) string {
	var s string
	if err := json.Unmarshal(mustMember(t, env, "signature"), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustMember(t *testing.T, env, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(env), &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

func loadReceiptVectors(t testing.TB) receiptVectors {
	t.Helper()
	data, err := os.ReadFile(receiptVectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var v receiptVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Vectors) == 0 {
		t.Fatal("no vectors loaded")
	}
	return v
}

// TestReceiptVectors verifies every envelope of testdata/policy/receipts.json:
// forged, wrongly keyed, expired, replayed and malformed receipts are refused
// with their code; valid ones give their decision.
func TestReceiptVectors(t *testing.T) {
	if *updateVectors {
		v := buildReceiptVectors(t)
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(receiptVectorsPath, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := loadReceiptVectors(t)
	keys := map[string]ed25519.PublicKey{}
	for kid, s := range v.Keys {
		k, err := parsePublicKey(s)
		if err != nil {
			t.Fatal(err)
		}
		keys[kid] = k
	}
	now, err := time.Parse(time.RFC3339, v.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, vec := range v.Vectors {
		r, ref, err := ParseReceipt([]byte(vec.Envelope), keys)
		var exp time.Time
		if err == nil {
			exp, err = r.Check(v.Stage, v.Subject, v.Nonce, now)
		}
		var re *ReceiptError
		switch {
		case vec.Error != "" && (!errors.As(err, &re) || re.Reason != vec.Error):
			t.Errorf("%s: got %v, want %s", vec.Name, err, vec.Error)
		case vec.Error == "" && err != nil:
			t.Errorf("%s: refused: %v", vec.Name, err)
		case vec.Error == "" && (ref.Decision != vec.Decision || ref.SHA256 != vec.SHA256 || exp.UTC().Format(time.RFC3339) != vec.Expires || ref.Kind != ReceiptType):
			t.Errorf("%s: got %+v expiring %s", vec.Name, ref, exp)
		}
	}
}

func TestReceiptCacheLifeIsCapped(t *testing.T) {
	t.Parallel()
	k := testKey("k1")
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	r := Receipt{V: 1, Type: ReceiptType, Decision: Allow, Stage: StageBeforeConnect, Subject: "s", Nonce: "n",
		IssuedAt: "2026-11-02T09:00:00Z", ExpiresAt: "2036-11-02T09:00:00Z", KID: "k"}
	env, err := SignReceipt(r, k)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ParseReceipt(env, map[string]ed25519.PublicKey{"k": k.Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := got.Check(StageBeforeConnect, "s", "n", now)
	if err != nil || !exp.Equal(now.Add(maxReceiptLife)) {
		t.Errorf("expiry %v, %v; want capped at %v", exp, err, now.Add(maxReceiptLife))
	}
}
