package egress

import (
	"net/netip"
)

// Class is what an IP address is, for the egress rule.
type Class string

// Address classes. Public is the only one an upstream that is not
// allow-listed may reach.
const (
	Public      Class = "public"
	Loopback    Class = "loopback"     // 127.0.0.0/8, ::1
	Private     Class = "private"      // RFC 1918, ULA fc00::/7
	LinkLocal   Class = "link-local"   // 169.254.0.0/16, fe80::/10
	CGNAT       Class = "cgnat"        // 100.64.0.0/10 (RFC 6598; Tailscale)
	Metadata    Class = "metadata"     // 169.254.169.254, fd00:ec2::254
	Unspecified Class = "unspecified"  // 0.0.0.0/8, ::
	Multicast   Class = "multicast"    // 224.0.0.0/4, ff00::/8
	Reserved    Class = "reserved"     // 240.0.0.0/4 and broadcast, 198.18.0.0/15, 192.0.0.0/24, fec0::/10, 100::/64
	Tunnel      Class = "tunnel"       // Teredo 2001::/32: the IPv4 peer it reaches is hidden
	Invalid     Class = "invalid-addr" // not an address
)

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")

	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	ietf       = netip.MustParsePrefix("192.0.0.0/24")
	benchmark  = netip.MustParsePrefix("198.18.0.0/15")
	future     = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	siteLocal  = netip.MustParsePrefix("fec0::/10")
	discard6   = netip.MustParsePrefix("100::/64")
	teredo     = netip.MustParsePrefix("2001::/32")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// Classify returns the class of addr. IPv4-mapped, NAT64 and 6to4
// addresses are judged by the IPv4 address they carry, so that
// ::ffff:127.0.0.1 or 64:ff9b::a9fe:a9fe cannot reach what 127.0.0.1 or
// 169.254.169.254 cannot.
func Classify(addr netip.Addr) Class {
	if !addr.IsValid() {
		return Invalid
	}
	addr = addr.WithZone("")
	if addr.Is4In6() {
		return Classify(addr.Unmap())
	}
	if addr.Is6() {
		switch {
		case nat64.Contains(addr):
			b := addr.As16()
			return Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case nat64Local.Contains(addr):
			return Private
		case sixToFour.Contains(addr):
			b := addr.As16()
			return Classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case teredo.Contains(addr):
			return Tunnel
		case siteLocal.Contains(addr), discard6.Contains(addr):
			return Reserved
		}
		if addr == metadataV6 {
			return Metadata
		}
		// IPv4-compatible addresses (::a.b.c.d, deprecated) other than ::
		// and ::1 carry an IPv4 address too.
		b := addr.As16()
		if isZero(b[:12]) && !addr.IsUnspecified() && !addr.IsLoopback() {
			return Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		}
	}
	switch {
	case addr == metadataV4:
		return Metadata
	case addr.IsUnspecified(), thisNet.Contains(addr):
		return Unspecified
	case addr.IsLoopback():
		return Loopback
	case addr.IsMulticast():
		return Multicast
	case addr.IsLinkLocalUnicast():
		return LinkLocal
	case addr.IsPrivate():
		return Private
	case cgnat.Contains(addr):
		return CGNAT
	case future.Contains(addr), ietf.Contains(addr), benchmark.Contains(addr):
		return Reserved
	}
	return Public
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// privateOK reports whether an allow-listed private upstream may reach an
// address of class c. Metadata, unspecified, multicast, reserved and
// tunnel addresses are never reachable; IPv6 link-local is refused because
// a pinned address cannot carry its interface zone.
func privateOK(addr netip.Addr) bool {
	switch Classify(addr) {
	case Public, Loopback, Private, CGNAT:
		return true
	case LinkLocal:
		return addr.Unmap().Is4()
	}
	return false
}
