package launch

import "net/netip"

// nonPublic lists the address ranges the egress proxy refuses for a host
// name, whatever it resolves to: a name in the allowlist must never lead
// inside (DNS rebinding). Only an allowlist entry that is the IP literal
// itself reaches one of them.
var nonPublic = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local; cloud metadata)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// embeddedV4 are IPv6 ranges that carry an IPv4 address in their last 32
// bits and reach it: the IPv4 address is judged.
var embeddedV4 = []netip.Prefix{
	netip.MustParsePrefix("::ffff:0:0/96"), // IPv4-mapped
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("::/96"), // IPv4-compatible (deprecated)
}

// NonPublicReason says why ip must not be reached through a host name,
// "" when it is a public address.
func NonPublicReason(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is6() {
		for _, p := range embeddedV4 {
			if p.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback() {
				b := ip.As16()
				return NonPublicReason(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
			}
		}
		if p := netip.MustParsePrefix("2002::/16"); p.Contains(ip) {
			b := ip.As16() // 6to4: the IPv4 address is bits 16-47
			if r := NonPublicReason(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); r != "" {
				return r + " (through 6to4)"
			}
		}
	}
	for _, n := range nonPublic {
		if n.prefix.Contains(ip) {
			return n.reason
		}
	}
	return ""
}
