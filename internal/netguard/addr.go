package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// blocked are the ranges no request made for the agent may reach unless allowPrivate opens
// them: this machine, private networks, link-local (where cloud metadata services answer),
// CGNAT, multicast, unspecified, documentation and reserved ranges. IPv4-mapped, IPv4-compatible,
// NAT64 and 6to4 IPv6 addresses are checked by the IPv4 address they carry (embeddedV4).
var blocked = mustPrefixes(
	// IPv4
	"0.0.0.0/8",       // "this network", unspecified
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // CGNAT (RFC 6598)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local; 169.254.169.254 is the cloud metadata service
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments (192.0.0.192 is Oracle's metadata)
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, broadcast
	// IPv6
	"::/128",         // unspecified
	"::1/128",        // loopback
	"64:ff9b:1::/48", // local-use NAT64
	"100::/64",       // discard
	"2001::/32",      // Teredo: the IPv4 it reaches is obfuscated, so refuse it whole
	"2001:db8::/32",  // documentation
	"fc00::/7",       // unique local; fd00:ec2::254 is AWS's metadata service
	"fe80::/10",      // link-local
	"fec0::/10",      // site-local (deprecated)
	"ff00::/8",       // multicast
)

func mustPrefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixToV4 = netip.MustParsePrefix("2002::/16")
	compat  = netip.MustParsePrefix("::/96")
)

// embeddedV4 returns the IPv4 address an IPv6 address carries in a form that reaches it:
// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and
// 6to4 (2002:aabb:ccdd::).
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case compat.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToV4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// isBlocked reports whether a is in a blocked range, itself or by the IPv4 address it carries.
func isBlocked(a netip.Addr) bool {
	a = a.WithZone("")
	if v4, ok := embeddedV4(a); ok {
		if a.Is6() && compat.Contains(a) && !a.Is4In6() {
			return true // ::a.b.c.d is deprecated and never needed for a public fetch
		}
		a = v4
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// errNotIPv4 means a host looks numeric (its last label is a number) but is no IPv4 address
// in any spelling: browsers and resolvers disagree on such names, so they are refused.
var errNotIPv4 = errors.New("a numeric host that is not a valid IPv4 address")

// parseHost turns a URL's host into an address when it is one, in any spelling a resolver
// accepts: dotted decimal, IPv6 (with or without zone), and the inet_aton forms 127.1,
// 0x7f000001, 2130706433, 0177.0.0.1. ok is false for a name that must be resolved.
func parseHost(host string) (addr netip.Addr, ok bool, err error) {
	host = strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.WithZone(""), true, nil
	}
	if strings.Contains(host, ":") {
		return netip.Addr{}, false, fmt.Errorf("%q is not a valid IPv6 address", host)
	}
	labels := strings.Split(host, ".")
	if !numeric(labels[len(labels)-1]) {
		return netip.Addr{}, false, nil // a name
	}
	a, err := parseInetAton(labels)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("%q is %w", host, errNotIPv4)
	}
	return a, true, nil
}

// numeric reports whether a label is a number in decimal, octal or hex (the WHATWG URL
// standard's test for "this host is an IPv4 address").
func numeric(label string) bool {
	if label == "" {
		return false
	}
	l := strings.ToLower(label)
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		return strings.Trim(l, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// parseInetAton parses 1 to 4 numeric parts as inet_aton does: the last part fills the
// remaining bytes, each part is decimal, octal (leading 0) or hex (0x).
func parseInetAton(parts []string) (netip.Addr, error) {
	if len(parts) > 4 {
		return netip.Addr{}, errNotIPv4
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := parsePart(p)
		if err != nil {
			return netip.Addr{}, err
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, errNotIPv4
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, errNotIPv4
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parsePart(p string) (uint64, error) {
	l := strings.ToLower(p)
	base := 10
	switch {
	case strings.HasPrefix(l, "0x"):
		base, l = 16, l[2:]
		if l == "" {
			return 0, nil // "0x" alone is 0 to inet_aton
		}
	case len(l) > 1 && l[0] == '0':
		base, l = 8, l[1:]
	}
	n, err := strconv.ParseUint(l, base, 32)
	if err != nil {
		return 0, errNotIPv4
	}
	return n, nil
}
