package ipvs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// The destination part of the IPVS generic netlink protocol
// (include/uapi/linux/ip_vs.h).
const (
	cmdSetDest = 6
	cmdGetDest = 8

	cmdAttrDest = 2

	destAttrAddr        = 1
	destAttrPort        = 2 // network byte order
	destAttrFwdMethod   = 3
	destAttrWeight      = 4
	destAttrUThresh     = 5
	destAttrLThresh     = 6
	destAttrActiveConns = 7
	destAttrInactConns  = 8
	destAttrAddrFamily  = 11
	destAttrTunType     = 13
	destAttrTunPort     = 14 // network byte order
	destAttrTunFlags    = 15
)

// Dest is a real server of a virtual service as the kernel lists it. The
// forwarding, threshold and tunnel settings are kept so that SetDestWeight
// changes the weight and nothing else.
type Dest struct {
	// Family is the real server's address family (it may differ from the
	// service's with tunnelling).
	Family uint16
	Addr   netip.Addr
	Port   uint16
	// Weight is the weight in force; 0 takes no new connections.
	Weight int32
	// FwdMethod is IP_VS_CONN_F_MASQ, _TUNNEL, _DROUTE, ...
	FwdMethod uint32
	// UThresh and LThresh are the connection thresholds (0: none).
	UThresh, LThresh uint32
	// ActiveConns and InactConns are the kernel's connection counts.
	ActiveConns, InactConns uint32
	// TunType, TunPort and TunFlags are the tunnel settings.
	TunType  uint8
	TunPort  uint16
	TunFlags uint16
	// Stats are the real server's counters, as listed; SetDestWeight
	// ignores them.
	Stats Stats
}

// AddrPort is the real server's address and port.
func (d Dest) AddrPort() netip.AddrPort { return netip.AddrPortFrom(d.Addr, d.Port) }

// Dests lists the real servers of svc with their weights and connection
// counts.
func (n *Netlink) Dests(ctx context.Context, svc Service) ([]Dest, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		encodeServiceID(nae, svc.ServiceID)
		return nil
	})
	data, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := n.execute(ctx, genetlink.Message{
		Header: genetlink.Header{Command: cmdGetDest, Version: genlVersion},
		Data:   data,
	}, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("list real servers of %s: %w", svc.ServiceID, err)
	}
	dests := make([]Dest, 0, len(msgs))
	for _, m := range msgs {
		d, err := decodeDest(m.Data, svc.Family)
		if err != nil {
			return nil, fmt.Errorf("list real servers of %s: %w", svc.ServiceID, err)
		}
		dests = append(dests, d)
	}
	return dests, nil
}

// SetDestWeight gives the real server d of svc the weight w, keeping its
// other settings.
func (n *Netlink) SetDestWeight(ctx context.Context, svc Service, d Dest, w int32) error {
	d.Weight = w
	data, err := encodeDest(svc.ServiceID, d)
	if err != nil {
		return err
	}
	_, err = n.execute(ctx, genetlink.Message{
		Header: genetlink.Header{Command: cmdSetDest, Version: genlVersion},
		Data:   data,
	}, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("set weight %d on %s of %s: %w", w, d.AddrPort(), svc.ServiceID, err)
	}
	return nil
}

// encodeServiceID writes the attributes that identify a service.
func encodeServiceID(nae *netlink.AttributeEncoder, id ServiceID) {
	nae.Uint16(svcAttrAF, id.Family)
	if id.FWMark != 0 {
		nae.Uint32(svcAttrFWMark, id.FWMark)
		return
	}
	nae.Uint16(svcAttrProtocol, id.Protocol)
	nae.Bytes(svcAttrAddr, inetAddr(id.Addr))
	nae.Bytes(svcAttrPort, binary.BigEndian.AppendUint16(nil, id.Port))
}

// encodeDest renders a SET_DEST request: the service's identity, then the
// destination with every setting the kernel requires for an edit.
func encodeDest(id ServiceID, d Dest) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		encodeServiceID(nae, id)
		return nil
	})
	ae.Nested(cmdAttrDest, func(nae *netlink.AttributeEncoder) error {
		nae.Bytes(destAttrAddr, inetAddr(d.Addr))
		nae.Bytes(destAttrPort, binary.BigEndian.AppendUint16(nil, d.Port))
		nae.Uint16(destAttrAddrFamily, d.Family)
		nae.Uint32(destAttrFwdMethod, d.FwdMethod)
		nae.Uint32(destAttrWeight, uint32(d.Weight))
		nae.Uint32(destAttrUThresh, d.UThresh)
		nae.Uint32(destAttrLThresh, d.LThresh)
		nae.Uint8(destAttrTunType, d.TunType)
		nae.Bytes(destAttrTunPort, binary.BigEndian.AppendUint16(nil, d.TunPort))
		nae.Uint16(destAttrTunFlags, d.TunFlags)
		return nil
	})
	return ae.Encode()
}

// decodeDest parses one answer to a GET_DEST dump; family is the service's,
// for kernels that do not name the destination's.
func decodeDest(b []byte, family uint16) (Dest, error) {
	d := Dest{Family: family}
	var rawAddr []byte
	found := false
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return d, err
	}
	for ad.Next() {
		if ad.Type() != cmdAttrDest {
			continue
		}
		found = true
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			rawAddr = decodeDestAttrs(nad, &d)
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		return d, err
	}
	if !found {
		return d, errors.New("answer without a real server")
	}
	d.Addr, err = addrOf(d.Family, rawAddr)
	return d, err
}

func decodeDestAttrs(nad *netlink.AttributeDecoder, d *Dest) []byte {
	var rawAddr []byte
	port := func() uint16 {
		if b := nad.Bytes(); len(b) == 2 {
			return binary.BigEndian.Uint16(b)
		}
		return 0
	}
	have64 := false
	for nad.Next() {
		switch nad.Type() {
		case destAttrStats:
			nestedStats(nad, &d.Stats, false, &have64)
		case destAttrStats64:
			nestedStats(nad, &d.Stats, true, &have64)
		case destAttrAddr:
			rawAddr = nad.Bytes()
		case destAttrPort:
			d.Port = port()
		case destAttrAddrFamily:
			d.Family = nad.Uint16()
		case destAttrFwdMethod:
			d.FwdMethod = nad.Uint32()
		case destAttrWeight:
			d.Weight = int32(nad.Uint32())
		case destAttrUThresh:
			d.UThresh = nad.Uint32()
		case destAttrLThresh:
			d.LThresh = nad.Uint32()
		case destAttrActiveConns:
			d.ActiveConns = nad.Uint32()
		case destAttrInactConns:
			d.InactConns = nad.Uint32()
		case destAttrTunType:
			d.TunType = nad.Uint8()
		case destAttrTunPort:
			d.TunPort = port()
		case destAttrTunFlags:
			d.TunFlags = nad.Uint16()
		}
	}
	return rawAddr
}

// inetAddr renders an address as a union nf_inet_addr (16 bytes).
func inetAddr(addr netip.Addr) []byte {
	var b [16]byte
	copy(b[:], addr.AsSlice())
	return b[:]
}
