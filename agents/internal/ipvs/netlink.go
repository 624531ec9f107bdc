package ipvs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The IPVS generic netlink protocol, from include/uapi/linux/ip_vs.h.
const (
	genlName    = "IPVS"
	genlVersion = 1

	cmdSetService = 2
	cmdGetService = 4

	cmdAttrService = 1

	svcAttrAF        = 1
	svcAttrProtocol  = 2
	svcAttrAddr      = 3 // union nf_inet_addr: 16 bytes, IPv4 in the first 4
	svcAttrPort      = 4 // network byte order
	svcAttrFWMark    = 5
	svcAttrSchedName = 6
	svcAttrFlags     = 7 // struct ip_vs_flags { __u32 flags, mask; }
	svcAttrTimeout   = 8
	svcAttrNetmask   = 9
	svcAttrPEName    = 11
)

// defaultTimeout bounds a netlink exchange whose context has no deadline.
const defaultTimeout = 5 * time.Second

// Netlink is the Kernel of one network namespace, reached over generic
// netlink. It keeps one socket, opened on first use and again after an
// error.
type Netlink struct {
	// NetNS is the path of the network namespace, e.g. /run/netns/fl-lb;
	// empty means the agent's own.
	NetNS string

	mu     sync.Mutex
	conn   *genetlink.Conn
	family uint16
}

// Services implements Kernel.
func (n *Netlink) Services(ctx context.Context) ([]Service, error) {
	msgs, err := n.execute(ctx, genetlink.Message{
		Header: genetlink.Header{Command: cmdGetService, Version: genlVersion},
	}, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("list ipvs services: %w", err)
	}
	services := make([]Service, 0, len(msgs))
	for _, m := range msgs {
		svc, err := decodeService(m.Data)
		if err != nil {
			return nil, fmt.Errorf("list ipvs services: %w", err)
		}
		services = append(services, svc)
	}
	return services, nil
}

// SetScheduler implements Kernel.
func (n *Netlink) SetScheduler(ctx context.Context, svc Service, sched string) error {
	svc.Scheduler = sched
	data, err := encodeService(svc)
	if err != nil {
		return err
	}
	_, err = n.execute(ctx, genetlink.Message{
		Header: genetlink.Header{Command: cmdSetService, Version: genlVersion},
		Data:   data,
	}, netlink.Request|netlink.Acknowledge)
	return err
}

// Close releases the socket.
func (n *Netlink) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	return err
}

// execute sends m and returns the answers, dropping the socket on error so
// that the next call starts afresh (the IPVS family appears only once the
// ip_vs module is loaded).
func (n *Netlink) execute(ctx context.Context, m genetlink.Message, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.dial(); err != nil {
		return nil, err
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultTimeout)
	}
	if err := n.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	msgs, err := n.conn.Execute(m, n.family, flags)
	if err != nil && !isKernelRefusal(err) {
		_ = n.conn.Close()
		n.conn = nil
	}
	return msgs, err
}

// isKernelRefusal reports whether err is the kernel's answer to a request
// (an error code in a netlink message) rather than a broken socket.
func isKernelRefusal(err error) bool {
	var op *netlink.OpError
	var errno unix.Errno
	return errors.As(err, &op) && errors.As(op.Err, &errno)
}

// dial opens the socket in NetNS and looks up the IPVS family.
func (n *Netlink) dial() error {
	if n.conn != nil {
		return nil
	}
	cfg := &netlink.Config{}
	if n.NetNS != "" {
		ns, err := os.Open(n.NetNS)
		if err != nil {
			return fmt.Errorf("network namespace: %w", err)
		}
		defer ns.Close()
		cfg.NetNS = int(ns.Fd())
	}
	conn, err := genetlink.Dial(cfg)
	if err != nil {
		return fmt.Errorf("generic netlink: %w", err)
	}
	fam, err := conn.GetFamily(genlName)
	if err != nil {
		_ = conn.Close()
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("the kernel has no IPVS (module ip_vs not loaded)")
		}
		return fmt.Errorf("generic netlink family %s: %w", genlName, err)
	}
	n.conn, n.family = conn, fam.ID
	return nil
}

// encodeService renders the IPVS_CMD_ATTR_SERVICE attribute of a
// SET_SERVICE request: the identity, then every setting the kernel
// requires for an edit (scheduler, flags, timeout, netmask).
func encodeService(svc Service) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		encodeServiceID(nae, svc.ServiceID)
		nae.String(svcAttrSchedName, svc.Scheduler)
		if svc.PEName != "" {
			nae.String(svcAttrPEName, svc.PEName)
		}
		flags := binary.NativeEndian.AppendUint32(nil, svc.Flags)
		nae.Bytes(svcAttrFlags, binary.NativeEndian.AppendUint32(flags, ^uint32(0)))
		nae.Uint32(svcAttrTimeout, svc.Timeout)
		nae.Uint32(svcAttrNetmask, svc.Netmask)
		return nil
	})
	return ae.Encode()
}

// decodeService parses one answer to a GET_SERVICE dump.
func decodeService(b []byte) (Service, error) {
	var svc Service
	var rawAddr []byte
	found := false
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return svc, err
	}
	for ad.Next() {
		if ad.Type() != cmdAttrService {
			continue
		}
		found = true
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			rawAddr = decodeServiceAttrs(nad, &svc)
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return svc, err
	}
	if !found {
		return svc, errors.New("answer without a service")
	}
	if svc.FWMark == 0 {
		addr, err := addrOf(svc.Family, rawAddr)
		if err != nil {
			return svc, err
		}
		svc.Addr = addr
	}
	svc.ServiceID = svc.normalize()
	return svc, nil
}

// decodeServiceAttrs fills svc from the nested service attributes and
// returns the raw address, which needs the family to be read.
func decodeServiceAttrs(nad *netlink.AttributeDecoder, svc *Service) []byte {
	var rawAddr []byte
	have64 := false
	for nad.Next() {
		switch nad.Type() {
		case svcAttrStats:
			nestedStats(nad, &svc.Stats, false, &have64)
		case svcAttrStats64:
			nestedStats(nad, &svc.Stats, true, &have64)
		case svcAttrAF:
			svc.Family = nad.Uint16()
		case svcAttrProtocol:
			svc.Protocol = nad.Uint16()
		case svcAttrAddr:
			rawAddr = nad.Bytes()
		case svcAttrPort:
			if b := nad.Bytes(); len(b) == 2 {
				svc.Port = binary.BigEndian.Uint16(b)
			}
		case svcAttrFWMark:
			svc.FWMark = nad.Uint32()
		case svcAttrSchedName:
			svc.Scheduler = nad.String()
		case svcAttrFlags:
			if b := nad.Bytes(); len(b) >= 4 {
				svc.Flags = binary.NativeEndian.Uint32(b)
			}
		case svcAttrTimeout:
			svc.Timeout = nad.Uint32()
		case svcAttrNetmask:
			svc.Netmask = nad.Uint32()
		case svcAttrPEName:
			svc.PEName = nad.String()
		}
	}
	return rawAddr
}

// addrOf reads a union nf_inet_addr.
func addrOf(family uint16, raw []byte) (netip.Addr, error) {
	switch {
	case family == unix.AF_INET && len(raw) >= 4:
		return netip.AddrFrom4([4]byte(raw[:4])), nil
	case family == unix.AF_INET6 && len(raw) >= 16:
		return netip.AddrFrom16([16]byte(raw[:16])), nil
	}
	return netip.Addr{}, fmt.Errorf("service address of %d bytes for family %d", len(raw), family)
}
