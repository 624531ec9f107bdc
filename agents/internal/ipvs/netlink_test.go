package ipvs

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// TestServiceRoundTrip: what SetScheduler sends parses back into the same
// service, the way the kernel's dump presents it.
func TestServiceRoundTrip(t *testing.T) {
	for _, svc := range []Service{
		{ServiceID: webID, Scheduler: "sed", Flags: 0x2, Timeout: 300, Netmask: 0xffffffff},
		{
			ServiceID: ServiceID{Family: unix.AF_INET6, Protocol: unix.IPPROTO_UDP, Addr: netip.MustParseAddr("fd00::10"), Port: 5353},
			Scheduler: "wlc", Netmask: 128, PEName: "sip",
		},
		{ServiceID: fwmID, Scheduler: "nq"},
	} {
		b, err := encodeService(svc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeService(b)
		if err != nil {
			t.Fatalf("%v: %v", svc.ServiceID, err)
		}
		if diff := cmp.Diff(svc, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("round trip mismatch (-want +got):\n%s", diff)
		}
	}
}

// TestEncodeServiceWire checks the layout the kernel expects: the address
// as a 16-byte union, the port in network byte order, the flags with a
// full mask, and every attribute an edit requires.
func TestEncodeServiceWire(t *testing.T) {
	b, err := encodeService(Service{ServiceID: webID, Scheduler: "sed", Flags: 0x2, Timeout: 300, Netmask: 0xffffffff})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[uint16][]byte{}
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		t.Fatal(err)
	}
	for ad.Next() {
		if ad.Type() != cmdAttrService || ad.TypeFlags()&netlink.Nested == 0 {
			t.Fatalf("top-level attribute %d (flags %#x), want a nested service", ad.Type(), ad.TypeFlags())
		}
		ad.Nested(func(nad *netlink.AttributeDecoder) error {
			for nad.Next() {
				attrs[nad.Type()] = nad.Bytes()
			}
			return nil
		})
	}
	if err := ad.Err(); err != nil {
		t.Fatal(err)
	}
	ne := binary.NativeEndian
	want := map[uint16][]byte{
		svcAttrAF:        ne.AppendUint16(nil, unix.AF_INET),
		svcAttrProtocol:  ne.AppendUint16(nil, unix.IPPROTO_TCP),
		svcAttrAddr:      {10, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		svcAttrPort:      {0, 80},
		svcAttrSchedName: []byte("sed\x00"),
		svcAttrFlags:     ne.AppendUint32(ne.AppendUint32(nil, 2), 0xffffffff),
		svcAttrTimeout:   ne.AppendUint32(nil, 300),
		svcAttrNetmask:   ne.AppendUint32(nil, 0xffffffff),
	}
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeServiceMarkFromKernel(t *testing.T) {
	// The kernel reports a mark service with protocol TCP and a zero
	// address; its ID must still match the one ipvs.json gives.
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		nae.Uint16(svcAttrAF, unix.AF_INET6)
		nae.Uint16(svcAttrProtocol, unix.IPPROTO_TCP)
		nae.Bytes(svcAttrAddr, make([]byte, 16))
		nae.Bytes(svcAttrPort, []byte{0, 0})
		nae.Uint32(svcAttrFWMark, 7)
		nae.String(svcAttrSchedName, "wlc")
		return nil
	})
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeService(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.ServiceID != fwmID || got.Scheduler != "wlc" {
		t.Errorf("decoded %+v, want %v with wlc", got, fwmID)
	}
}

func TestDecodeServiceErrors(t *testing.T) {
	if _, err := decodeService(nil); err == nil {
		t.Error("an empty answer must be an error")
	}
	ae := netlink.NewAttributeEncoder()
	ae.Nested(cmdAttrService, func(nae *netlink.AttributeEncoder) error {
		nae.Uint16(svcAttrAF, unix.AF_INET6)
		nae.Bytes(svcAttrAddr, []byte{1, 2, 3, 4})
		return nil
	})
	b, _ := ae.Encode()
	if _, err := decodeService(b); err == nil {
		t.Error("a 4-byte IPv6 address must be an error")
	}
}

func TestServiceIDString(t *testing.T) {
	for id, want := range map[ServiceID]string{
		webID:                             "TCP 10.0.0.10:80",
		dnsID:                             "UDP 10.0.0.10:53",
		fwmID:                             "FWM 7 IPv6",
		{Family: unix.AF_INET, FWMark: 3}: "FWM 3",
		{Family: unix.AF_INET6, Protocol: unix.IPPROTO_TCP, Addr: netip.MustParseAddr("fd00::1"), Port: 80}: "TCP [fd00::1]:80",
	} {
		if got := id.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
