// Package ipvs keeps the kernel's IPVS virtual servers on the schedulers
// the operator asked for. keepalived creates and maintains the services,
// but only accepts the schedulers it knows by name, and sets its own again
// whenever it reloads; the Reconciler reads the services over netlink and
// sets the wanted scheduler on each that differs, right after keepalived
// (re)loads and then every second, since IPVS sends no change
// notifications.
package ipvs

import (
	"context"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
)

// ServiceID identifies a virtual service the way the kernel does: an
// address service by family, protocol, address and port; a firewall-mark
// service by family and mark only.
type ServiceID struct {
	// Family is unix.AF_INET or unix.AF_INET6.
	Family uint16
	// Protocol is unix.IPPROTO_TCP or unix.IPPROTO_UDP; 0 for a mark
	// service.
	Protocol uint16
	// Addr and Port are the virtual address; zero for a mark service.
	Addr netip.Addr
	Port uint16
	// FWMark is the firewall mark of a mark service, 0 otherwise.
	FWMark uint32
}

// String renders the ID like ipvsadm does, e.g. "TCP 10.0.0.10:80" or
// "FWM 7 IPv6".
func (id ServiceID) String() string {
	if id.FWMark != 0 {
		if id.Family == unix.AF_INET6 {
			return fmt.Sprintf("FWM %d IPv6", id.FWMark)
		}
		return fmt.Sprintf("FWM %d", id.FWMark)
	}
	proto := map[uint16]string{unix.IPPROTO_TCP: "TCP", unix.IPPROTO_UDP: "UDP"}[id.Protocol]
	if proto == "" {
		proto = fmt.Sprintf("proto-%d", id.Protocol)
	}
	return proto + " " + netip.AddrPortFrom(id.Addr, id.Port).String()
}

// Service is a virtual service as the kernel lists it. Flags, Timeout,
// Netmask and PEName are kept so that SetScheduler changes the scheduler
// and nothing else.
type Service struct {
	ServiceID
	// Scheduler is the scheduler in force, e.g. "wlc".
	Scheduler string
	// Flags are the service flags (persistence, hashing options).
	Flags uint32
	// Timeout is the persistence timeout in seconds.
	Timeout uint32
	// Netmask is the persistence netmask (a prefix length for IPv6).
	Netmask uint32
	// PEName is the persistence engine, e.g. "sip"; usually empty.
	PEName string
	// Stats are the service's counters, as listed; SetScheduler ignores
	// them.
	Stats Stats
}

// Kernel is the IPVS table of one network namespace. Netlink implements
// it; tests use fakes.
type Kernel interface {
	// Services lists every virtual service with its scheduler.
	Services(ctx context.Context) ([]Service, error)
	// SetScheduler makes the kernel schedule svc with sched, keeping its
	// other settings. The kernel loads the module ip_vs_<sched> itself if
	// it can, and refuses an unknown scheduler.
	SetScheduler(ctx context.Context, svc Service, sched string) error
}

// IDOf returns the kernel's identity of a service listed in ipvs.json,
// which ParseIPVS has validated.
func IDOf(s bundle.IPVSService) ServiceID {
	family := uint16(unix.AF_INET)
	if s.AddressFamily() == "inet6" {
		family = unix.AF_INET6
	}
	if s.FWMark != 0 {
		return ServiceID{Family: family, FWMark: s.FWMark}
	}
	proto := uint16(unix.IPPROTO_TCP)
	if s.Protocol == "udp" {
		proto = unix.IPPROTO_UDP
	}
	addr, _ := netip.ParseAddr(s.Address)
	return ServiceID{Family: family, Protocol: proto, Addr: addr, Port: uint16(s.Port)}
}

// normalize makes the ID of a listed service comparable with IDOf's: the
// kernel reports mark services with protocol TCP and a zero address.
func (id ServiceID) normalize() ServiceID {
	if id.FWMark != 0 {
		return ServiceID{Family: id.Family, FWMark: id.FWMark}
	}
	return id
}
