package ipvs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The kernel sends both statistics attributes; the 64-bit one wins
// whichever comes first, and the 32-bit one (32-bit connection and packet
// counters, 64-bit byte counters) serves older kernels.
func TestDecodeStats(t *testing.T) {
	stats32 := func(nae *netlink.AttributeEncoder) error {
		nae.Uint32(statsAttrConns, 7)
		nae.Uint32(statsAttrInPkts, 70)
		nae.Uint32(statsAttrOutPkts, 60)
		nae.Uint64(statsAttrInBytes, 7000)
		nae.Uint64(statsAttrOutBytes, 6000)
		nae.Uint32(6, 1) // cps: a rate, ignored
		return nil
	}
	stats64 := func(nae *netlink.AttributeEncoder) error {
		nae.Uint64(statsAttrConns, 1<<33)
		nae.Uint64(statsAttrInPkts, 71)
		nae.Uint64(statsAttrOutPkts, 61)
		nae.Uint64(statsAttrInBytes, 7001)
		nae.Uint64(statsAttrOutBytes, 6001)
		return nil
	}
	want64 := Stats{Conns: 1 << 33, InPkts: 71, OutPkts: 61, InBytes: 7001, OutBytes: 6001}
	for name, tt := range map[string]struct {
		attrs func(nae *netlink.AttributeEncoder)
		want  Stats
	}{
		"32-bit only": {func(nae *netlink.AttributeEncoder) { nae.Nested(destAttrStats, stats32) },
			Stats{Conns: 7, InPkts: 70, OutPkts: 60, InBytes: 7000, OutBytes: 6000}},
		"64-bit after": {func(nae *netlink.AttributeEncoder) {
			nae.Nested(destAttrStats, stats32)
			nae.Nested(destAttrStats64, stats64)
		}, want64},
		"64-bit before": {func(nae *netlink.AttributeEncoder) {
			nae.Nested(destAttrStats64, stats64)
			nae.Nested(destAttrStats, stats32)
		}, want64},
	} {
		t.Run(name, func(t *testing.T) {
			ae := netlink.NewAttributeEncoder()
			ae.Nested(cmdAttrDest, func(nae *netlink.AttributeEncoder) error {
				nae.Bytes(destAttrAddr, inetAddr(webID.Addr))
				nae.Bytes(destAttrPort, []byte{0, 80})
				nae.Uint32(destAttrActiveConns, 2)
				tt.attrs(nae)
				return nil
			})
			b, err := ae.Encode()
			if err != nil {
				t.Fatal(err)
			}
			d, err := decodeDest(b, unix.AF_INET)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Stats); diff != "" {
				t.Errorf("stats mismatch (-want +got):\n%s", diff)
			}
			if d.ActiveConns != 2 || d.Port != 80 {
				t.Errorf("other attributes lost: %+v", d)
			}
		})
	}
}

func TestDecodeServiceStats(t *testing.T) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		nae.Uint16(svcAttrAF, unix.AF_INET)
		nae.Uint16(svcAttrProtocol, unix.IPPROTO_TCP)
		nae.Bytes(svcAttrAddr, inetAddr(webID.Addr))
		nae.Bytes(svcAttrPort, []byte{0, 80})
		nae.String(svcAttrSchedName, "wlc")
		nae.Nested(svcAttrStats64, func(s *netlink.AttributeEncoder) error {
			s.Uint64(statsAttrConns, 12)
			s.Uint64(statsAttrInBytes, 1200)
			s.Uint64(statsAttrOutBytes, 3400)
			return nil
		})
		return nil
	})
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := decodeService(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stats{Conns: 12, InBytes: 1200, OutBytes: 3400}); svc.Stats != want || svc.ServiceID != webID {
		t.Errorf("decoded %+v, want %v with stats %+v", svc, webID, want)
	}
}
