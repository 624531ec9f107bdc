package ipvs

import (
	"encoding/binary"

	"github.com/mdlayher/netlink"
)

// The statistics attributes of the IPVS generic netlink protocol
// (include/uapi/linux/ip_vs.h). IPVS_SVC_ATTR_STATS and
// IPVS_DEST_ATTR_STATS carry 32-bit connection and packet counters; the
// STATS64 variants (Linux 4.1+) carry every counter in 64 bits.
const (
	svcAttrStats    = 10
	svcAttrStats64  = 12
	destAttrStats   = 10
	destAttrStats64 = 12

	statsAttrConns    = 1
	statsAttrInPkts   = 2
	statsAttrOutPkts  = 3
	statsAttrInBytes  = 4
	statsAttrOutBytes = 5
)

// Stats are the kernel's cumulative counters of a virtual service or a
// real server since it was added to the table.
type Stats struct {
	// Conns is the number of connections scheduled.
	Conns uint64
	// InPkts, OutPkts, InBytes and OutBytes count the traffic from and
	// to the clients.
	InPkts, OutPkts, InBytes, OutBytes uint64
}

// decodeStats reads a nested statistics attribute. Each counter is read by
// its length, so that the 32-bit and 64-bit variants decode alike.
func decodeStats(nad *netlink.AttributeDecoder) Stats {
	var s Stats
	for nad.Next() {
		var v uint64
		switch b := nad.Bytes(); len(b) {
		case 4:
			v = uint64(binary.NativeEndian.Uint32(b))
		case 8:
			v = binary.NativeEndian.Uint64(b)
		default:
			continue
		}
		switch nad.Type() {
		case statsAttrConns:
			s.Conns = v
		case statsAttrInPkts:
			s.InPkts = v
		case statsAttrOutPkts:
			s.OutPkts = v
		case statsAttrInBytes:
			s.InBytes = v
		case statsAttrOutBytes:
			s.OutBytes = v
		}
	}
	return s
}

// nestedStats decodes the statistics attribute the decoder is on into
// *into, unless a 64-bit variant was already read (is64).
func nestedStats(nad *netlink.AttributeDecoder, into *Stats, is64 bool, have64 *bool) {
	if !is64 && *have64 {
		return
	}
	nad.Nested(func(inner *netlink.AttributeDecoder) error {
		*into = decodeStats(inner)
		return nil
	})
	if is64 {
		*have64 = true
	}
}
