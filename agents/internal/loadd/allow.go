package loadd

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Allowlist is the set of client networks both listeners answer. The zero
// (or nil) Allowlist answers everyone.
type Allowlist struct {
	prefixes []netip.Prefix
}

// ParseAllowlist parses comma-separated CIDRs ("10.0.0.0/8,2001:db8::/32");
// a bare address means that address alone. An empty string allows everyone.
func ParseAllowlist(s string) (*Allowlist, error) {
	a := &Allowlist{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			addr, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return nil, fmt.Errorf("--allow %q: not a CIDR or an address", part)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		a.prefixes = append(a.prefixes, p.Masked())
	}
	return a, nil
}

// Allows reports whether a client at addr may be answered. IPv4 clients
// reaching an IPv6 socket (::ffff:a.b.c.d) match IPv4 networks.
func (a *Allowlist) Allows(addr netip.Addr) bool {
	if a == nil || len(a.prefixes) == 0 {
		return true
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// String lists the networks, "any" when everyone is allowed.
func (a *Allowlist) String() string {
	if a == nil || len(a.prefixes) == 0 {
		return "any"
	}
	parts := make([]string, len(a.prefixes))
	for i, p := range a.prefixes {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// remoteAddr returns the IP address of a connection's peer (the zero Addr
// when it has none).
func remoteAddr(addr net.Addr) netip.Addr {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr()
	}
	ap, _ := netip.ParseAddrPort(addr.String())
	return ap.Addr()
}

// refusalLog logs refused clients at most once per interval, with the count
// of refusals it did not log, so that a scan cannot flood the journal.
type refusalLog struct {
	logger   *slog.Logger
	listener string
	every    time.Duration

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func newRefusalLog(logger *slog.Logger, listener string) *refusalLog {
	return &refusalLog{logger: logger, listener: listener, every: 10 * time.Second}
}

func (r *refusalLog) note(now time.Time, client netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.every {
		r.suppressed++
		return
	}
	r.logger.Warn("refused a client outside --allow", "listener", r.listener, "client", client.String(),
		"refused_unlogged", r.suppressed)
	r.last, r.suppressed = now, 0
}
