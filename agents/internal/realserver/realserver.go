// Package realserver prepares a Linux real server for IPVS direct routing
// (DR) and IP-in-IP tunnelling (TUN): the director forwards packets still
// addressed to the virtual IP (VIP), so the real server must accept them as
// local, and it answers the client directly, with the VIP as source.
//
// The "ARP problem": an address configured anywhere on Linux is answered
// for in ARP on every interface, so a real server holding the VIP would
// compete with the director for the clients' (or the router's) ARP entry and
// take traffic the director should balance. The VIP therefore goes on a
// device that is not on the shared segment (lo for DR, the fallback tunnel
// for TUN) and ARP is restricted with two sysctls (LVS-DR HOWTO, section
// "The ARP problem"; Documentation/networking/ip-sysctl.rst):
//
//   - arp_ignore=1: answer only for addresses configured on the interface
//     the request came in on, so the VIP on lo or tunl0 is never announced;
//   - arp_announce=2: use the best address of the outgoing interface as the
//     sender address of our own ARP requests, never the VIP, which would
//     otherwise rewrite the neighbours' entry for the VIP to this server.
//
// Everything done is recorded in a state file (see Store) with the value it
// replaced, so that Manager.Remove undoes exactly what Manager.Add did.
package realserver

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Mode is how the director forwards to this real server.
type Mode string

// The forwarding methods that need the real server's cooperation. (IPVS NAT
// needs nothing: the director rewrites the destination.)
const (
	// ModeDR is direct routing (ipvsadm -g): the director only rewrites the
	// destination MAC, so the VIP must be local on this server.
	ModeDR Mode = "dr"
	// ModeTUN is IP-in-IP tunnelling (ipvsadm -i): the director encapsulates
	// the packet towards this server, whose fallback tunnel device
	// decapsulates it.
	ModeTUN Mode = "tun"
)

// ParseMode accepts "dr" and "tun".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeDR, ModeTUN:
		return m, nil
	case "":
		return "", errors.New("mode is required: dr or tun")
	default:
		return "", fmt.Errorf("unknown mode %q: want dr or tun", s)
	}
}

// ParseVIP parses one virtual IP, IPv4 or IPv6, refusing what cannot be a
// service address: prefixes, zones, IPv4-mapped IPv6, and unspecified,
// loopback, link-local, multicast and broadcast addresses.
func ParseVIP(s string) (netip.Addr, error) {
	if strings.Contains(s, "/") {
		return netip.Addr{}, fmt.Errorf("VIP %q: give the address without a prefix length (it is added as /32 or /128)", s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("VIP %q is not an IP address", s)
	}
	var why string
	switch {
	case a.Zone() != "":
		why = "has a zone"
	case a.Is4In6():
		why = "is IPv4-mapped IPv6; give the IPv4 address " + a.Unmap().String()
	case a.IsUnspecified():
		why = "is unspecified"
	case a.IsLoopback():
		why = "is a loopback address"
	case a.IsLinkLocalUnicast():
		why = "is link-local"
	case a.IsMulticast():
		why = "is multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		why = "is the broadcast address"
	default:
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("VIP %s %s", s, why)
}

// ParseVIPs parses each argument with ParseVIP, dropping repeats.
func ParseVIPs(args []string) ([]netip.Addr, error) {
	if len(args) == 0 {
		return nil, errors.New("no VIP given")
	}
	seen := map[netip.Addr]bool{}
	var vips []netip.Addr
	for _, s := range args {
		a, err := ParseVIP(s)
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			vips = append(vips, a)
		}
	}
	return vips, nil
}

// Devices that receive VIPs.
const (
	// Loopback holds DR VIPs.
	Loopback = "lo"
	// Tunnel4 is the ipip module's fallback device: it decapsulates every
	// IP-in-IP packet that no more specific tunnel claims.
	Tunnel4 = "tunl0"
	// Tunnel6 is the ip6_tunnel module's fallback device, for IPv6 in IPv6.
	Tunnel6 = "ip6tnl0"
)

// Sysctl values this package sets. The kernel takes the larger of
// conf.all.<name> and conf.<dev>.<name> for arp_ignore, arp_announce and
// rp_filter, so conf.all is what makes a setting hold on every interface,
// including VLANs or bonds created later; setting only eth0 would miss them.
// conf.lo is set as well, as in the LVS-DR HOWTO and keepalived's examples:
// on its own it changes nothing (lo never sends or receives ARP), but it is
// the configuration operators know and check for. conf.default is left
// alone: it only seeds the per-device values that max() overrides.
var (
	arpSysctls = map[string]string{
		"net.ipv4.conf.all.arp_ignore":   "1",
		"net.ipv4.conf.all.arp_announce": "2",
		"net.ipv4.conf.lo.arp_ignore":    "1",
		"net.ipv4.conf.lo.arp_announce":  "2",
	}
	// Decapsulated packets arrive on tunl0 from the client's address, whose
	// route leaves through another interface: reverse-path filtering would
	// drop them as martians. Both values must be 0 for max() to be 0 on
	// tunl0; every other interface keeps its own rp_filter, which max() then
	// still applies there.
	tunnelSysctls = map[string]string{
		"net.ipv4.conf.all.rp_filter":   "0",
		"net.ipv4.conf.tunl0.rp_filter": "0",
	}
)

// needs is what one VIP requires of the host.
type needs struct {
	// device receives the VIP.
	device string
	// tunnel says device is a fallback tunnel device, created if missing.
	tunnel bool
	// sysctls maps sysctl names to the value required.
	sysctls map[string]string
}

// needsOf says what vip in mode requires. IPv6 needs no sysctl: the kernel
// answers neighbour solicitations only for addresses on the interface they
// arrive on (arp_ignore=1 is IPv6's only behaviour), picks source addresses
// by RFC 6724, and has no rp_filter.
func needsOf(vip netip.Addr, mode Mode) needs {
	n := needs{device: Loopback, sysctls: map[string]string{}}
	if mode == ModeTUN {
		n.tunnel = true
		n.device = Tunnel4
		if vip.Is6() {
			n.device = Tunnel6
		}
	}
	if vip.Is4() {
		for k, v := range arpSysctls {
			n.sysctls[k] = v
		}
		if mode == ModeTUN {
			for k, v := range tunnelSysctls {
				n.sysctls[k] = v
			}
		}
	}
	return n
}

// prefixOf is the host prefix the VIP is configured as.
func prefixOf(vip netip.Addr) netip.Prefix {
	return netip.PrefixFrom(vip, vip.BitLen())
}
