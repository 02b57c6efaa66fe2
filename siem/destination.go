package siem

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Destination returns the fingerprint of where a sink ships: its type,
// the receiver's address (syslog address and server name, OTLP endpoint
// and protocol, webhook URL) and how batches are signed (the Ed25519
// public key; for HMAC only the scheme, never a digest of the secret).
// It is "sha256:" and 64 hex digits, a digest so that a URL holding a
// token is not written to the cursor's row in the clear.
//
// A Source shared by several processes (the fleet's database) keeps it
// beside the sink's cursor: a process whose configuration gives the same
// sink name another receiver refuses to ship for it, rather than divert
// every process's events and move their one cursor (see Source.Bind).
func Destination(c SinkConfig) string {
	var signer string
	switch {
	case len(c.Ed25519Key) == ed25519.PrivateKeySize:
		signer = "ed25519:" + hex.EncodeToString(c.Ed25519Key.Public().(ed25519.PublicKey))
	case c.Ed25519KeyFile != "":
		signer = "ed25519"
	case len(c.HMACKey) > 0 || c.HMACKeyFile != "":
		signer = "hmac-sha256"
	}
	desc := fmt.Sprintf("mcpseal-audit-destination v1\ntype=%q\naddress=%q\nserver_name=%q\nendpoint=%q\nprotocol=%q\nurl=%q\nsigner=%q\n",
		c.Type, c.Address, c.ServerName, c.Endpoint, c.Protocol, c.URL, signer)
	sum := sha256.Sum256([]byte(desc))
	return "sha256:" + hex.EncodeToString(sum[:])
}
