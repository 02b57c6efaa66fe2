// Package sessionid seals a legacy Streamable HTTP session's facts into
// its Mcp-Session-Id, so that any gateway replica holding the replicas'
// shared key can continue the session (docs/fleet.md).
//
// A sealed id is
//
//	ms1.<key id>.<base64url, no padding: nonce (12 bytes) || AES-256-GCM ciphertext>
//
// The plaintext is the JSON form of Claims. The additional data binds the
// format, the key id and the route name, so an id sealed for one route
// does not open on another and a key id cannot be swapped. Every id gets a
// fresh random nonce. Keys are used as they are (no derivation per id or
// per request): each is a 32-byte AES-256 key, and its cipher.AEAD is made
// once when the key file is loaded.
//
// # The key file
//
//	mcpseal session keys v1
//	k2 <44 characters of standard base64 of 32 bytes>
//	k1 <...>
//
// The first key listed seals new ids; every key listed opens them, so a
// rotation adds a new key on top, and drops the old one once no session
// sealed under it is wanted (at most MaxAge later). Key ids are 1–16 of
// [a-z0-9-]; at most MaxKeys keys; every line ends with "\n"; nothing else
// (no blank lines, comments or spaces at the ends) is accepted.
//
// This package imports only the standard library and does no I/O.
package sessionid

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// Bounds.
const (
	// MaxKeyFile bounds the key file: MaxKeys lines of at most 62 bytes
	// and the header, with room to spare.
	MaxKeyFile = 4096
	// MaxKeys bounds the keys of one file: a current key and a few old
	// ones being rotated out.
	MaxKeys = 16
	// MaxID bounds a sealed id: it travels in a header on every request,
	// and load balancers commonly allow 8 KiB of headers in all.
	MaxID = 4096
	// MaxInstructions bounds the server instructions an id may carry; a
	// session whose server sends more gets an id that only its replica
	// knows.
	MaxInstructions = 1024
	// MaxUpstreamID bounds the upstream's own session id.
	MaxUpstreamID = 256
	// MaxCapabilities bounds the client's capability names, and
	// MaxCapability each name.
	MaxCapabilities = 32
	MaxCapability   = 64
	// MaxAge is how long after its issue a sealed id opens on any
	// replica.
	MaxAge = 12 * time.Hour
)

const (
	header    = "mcpseal session keys v1\n"
	prefix    = "ms1."
	keySize   = 32
	nonceSize = 12
	aadLabel  = "mcpseal session id v1"
)

// Errors.
var (
	// ErrNotSealed: the id does not have the sealed form (a replica's own
	// random id).
	ErrNotSealed = errors.New("sessionid: not a sealed id")
	// ErrInvalid: a sealed id that does not open: tampered, sealed for
	// another route, under a key not listed, expired, or malformed.
	ErrInvalid = errors.New("sessionid: the sealed id does not open")
)

// Claims are what a sealed id carries.
type Claims struct {
	// Local is the id the sessions of this id are known by on every
	// replica (32 hex digits).
	Local string `json:"local"`
	// Route is the route's name (also bound as additional data).
	Route string `json:"route"`
	// Upstream is the upstream's own Mcp-Session-Id, "" when it gave none.
	Upstream string `json:"upstream"`
	// Server is the Server digest of the upstream URL the session was
	// opened with ("" in ids that bind none): a replica whose route of
	// the same name points elsewhere must not present Upstream there.
	Server string `json:"server,omitempty"`
	// Protocol is the negotiated protocol version.
	Protocol string `json:"protocol"`
	// ClientVersion is the version the client's initialize asked for.
	ClientVersion string `json:"client_version"`
	// Capabilities are the names of the capabilities the client declared.
	Capabilities []string `json:"capabilities"`
	// DiscoverRefused: the client fell back to initialize after a refused
	// server/discover (part of the pinned profile).
	DiscoverRefused bool `json:"discover_refused"`
	// Offers are the listing kinds the server's capabilities offered
	// ("tools", "prompts", "resources").
	Offers []string `json:"offers"`
	// Instructions are the verified instructions the client received,
	// nil when the server sent none.
	Instructions *string `json:"instructions"`
	// Owner is the hex SHA-256 of the caller's identity key (issuer and
	// subject) under --auth, of "" without.
	Owner string `json:"owner"`
	// Issued and Expires are Unix seconds.
	Issued  int64 `json:"iat"`
	Expires int64 `json:"exp"`
}

// Keys are the replicas' shared session keys.
type Keys struct {
	current string
	aead    map[string]cipher.AEAD
	order   []string
}

// ParseKeys reads a key file (see the package comment). Its errors never
// quote the file.
func ParseKeys(b []byte) (*Keys, error) {
	if len(b) > MaxKeyFile {
		return nil, errors.New("sessionid: the key file is over 4096 bytes")
	}
	s := string(b)
	if !strings.HasPrefix(s, header) {
		return nil, errors.New(`sessionid: the key file must start with "mcpseal session keys v1"`)
	}
	s = s[len(header):]
	if s == "" || !strings.HasSuffix(s, "\n") {
		return nil, errors.New("sessionid: the key file lists no key, or its last line does not end with a line break")
	}
	k := &Keys{aead: make(map[string]cipher.AEAD)}
	seen := make(map[string]bool)
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if i >= MaxKeys {
			return nil, errors.New("sessionid: the key file lists more than 16 keys")
		}
		id, enc, ok := strings.Cut(line, " ")
		if !ok || !validKeyID(id) {
			return nil, errors.New("sessionid: a key line is not \"ID KEY\" with an id of 1-16 of [a-z0-9-]")
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || len(raw) != keySize || base64.StdEncoding.EncodeToString(raw) != enc {
			return nil, errors.New("sessionid: key " + id + " is not the standard base64 of 32 bytes")
		}
		if _, dup := k.aead[id]; dup {
			return nil, errors.New("sessionid: key id " + id + " is listed twice")
		}
		if seen[string(raw)] {
			return nil, errors.New("sessionid: key " + id + " repeats another key")
		}
		seen[string(raw)] = true
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aead[id] = aead
		k.order = append(k.order, id)
		if i == 0 {
			k.current = id
		}
	}
	return k, nil
}

// Current is the id of the key that seals.
func (k *Keys) Current() string { return k.current }

// IDs are the listed key ids, current first.
func (k *Keys) IDs() []string { return append([]string(nil), k.order...) }

func validKeyID(id string) bool {
	if len(id) == 0 || len(id) > 16 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NewKey returns a new key line "ID KEY\n" for a key file, from rand.
func NewKey(id string, rnd io.Reader) (string, error) {
	if !validKeyID(id) {
		return "", errors.New("sessionid: a key id is 1-16 of [a-z0-9-]")
	}
	var b [keySize]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", err
	}
	return id + " " + base64.StdEncoding.EncodeToString(b[:]) + "\n", nil
}

// Owner is the Claims.Owner of an identity key ("" without --auth).
func Owner(identityKey string) string {
	sum := sha256.Sum256([]byte("mcpseal session owner v1\x00" + identityKey))
	return hex.EncodeToString(sum[:])
}

// Server is the Claims.Server of an upstream URL.
func Server(upstreamURL string) string {
	sum := sha256.Sum256([]byte("mcpseal session server v1\x00" + upstreamURL))
	return hex.EncodeToString(sum[:])
}

// FileHeader is the first line of a key file.
const FileHeader = header

func aad(keyID, route string) []byte {
	return []byte(aadLabel + "\x00" + keyID + "\x00" + route)
}

// check refuses claims outside the bounds, so that an id never grows
// past MaxID and a replica never continues a session it could not have
// issued.
func (c *Claims) check() error {
	switch {
	case !validLocal(c.Local):
		return errors.New("sessionid: the local id is not 32 hex digits")
	case c.Route == "" || len(c.Route) > 128:
		return errors.New("sessionid: the route name is empty or too long")
	case len(c.Upstream) > MaxUpstreamID || !visibleASCII(c.Upstream):
		return errors.New("sessionid: the upstream session id is too long or not visible ASCII")
	case !isDate(c.Protocol) || !isDate(c.ClientVersion):
		return errors.New("sessionid: a protocol version is not a date")
	case len(c.Capabilities) > MaxCapabilities:
		return errors.New("sessionid: too many client capabilities")
	case c.Instructions != nil && len(*c.Instructions) > MaxInstructions:
		return errors.New("sessionid: the instructions are too long to seal")
	case c.Server != "" && len(c.Server) != 64:
		return errors.New("sessionid: the server is not a SHA-256 digest")
	case len(c.Owner) != 64:
		return errors.New("sessionid: the owner is not a SHA-256 digest")
	case c.Expires <= c.Issued || c.Expires-c.Issued > int64(MaxAge/time.Second):
		return errors.New("sessionid: the lifetime is out of range")
	}
	for _, n := range c.Capabilities {
		if n == "" || len(n) > MaxCapability {
			return errors.New("sessionid: a capability name is empty or too long")
		}
	}
	if len(c.Offers) > 3 {
		return errors.New("sessionid: too many offers")
	}
	for _, o := range c.Offers {
		if o != "tools" && o != "prompts" && o != "resources" {
			return errors.New("sessionid: an offer is not a listing kind")
		}
	}
	return nil
}

func validLocal(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func visibleASCII(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func isDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i, c := range []byte(v) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Seal returns the sealed id of c under the current key, with a nonce from
// rnd (crypto/rand.Reader when nil).
func (k *Keys) Seal(c Claims, rnd io.Reader) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	plain, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, nonceSize, nonceSize+len(plain)+16)
	if _, err := io.ReadFull(rnd, nonce); err != nil {
		return "", err
	}
	sealed := k.aead[k.current].Seal(nonce, nonce, plain, aad(k.current, c.Route))
	id := prefix + k.current + "." + base64.RawURLEncoding.EncodeToString(sealed)
	if len(id) > MaxID {
		return "", errors.New("sessionid: the sealed id is over 4096 bytes")
	}
	return id, nil
}

// IsSealed reports whether id has the sealed form's prefix.
func IsSealed(id string) bool { return strings.HasPrefix(id, prefix) }

// Open opens a sealed id presented on route at now. It returns
// ErrNotSealed for an id without the sealed prefix and ErrInvalid for any
// sealed id that does not open, whatever the reason (the caller answers
// both with 404, and learns nothing that helps forge one). Expiry is
// checked here too: use OpenAnyTime for an id whose session this process
// holds.
func (k *Keys) Open(id, route string, now time.Time) (Claims, error) {
	c, err := k.OpenAnyTime(id, route)
	if err != nil {
		return Claims{}, err
	}
	if t := now.Unix(); t < c.Issued-60 || t >= c.Expires {
		return Claims{}, ErrInvalid
	}
	return c, nil
}

// OpenAnyTime is Open without the expiry check.
func (k *Keys) OpenAnyTime(id, route string) (Claims, error) {
	if !IsSealed(id) {
		return Claims{}, ErrNotSealed
	}
	if len(id) > MaxID {
		return Claims{}, ErrInvalid
	}
	keyID, body, ok := strings.Cut(id[len(prefix):], ".")
	if !ok {
		return Claims{}, ErrInvalid
	}
	aead := k.aead[keyID]
	if aead == nil {
		return Claims{}, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(raw) < nonceSize+aead.Overhead() || base64.RawURLEncoding.EncodeToString(raw) != body {
		return Claims{}, ErrInvalid
	}
	plain, err := aead.Open(nil, raw[:nonceSize], raw[nonceSize:], aad(keyID, route))
	if err != nil {
		return Claims{}, ErrInvalid
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() || c.Route != route || c.check() != nil {
		return Claims{}, ErrInvalid
	}
	return c, nil
}
