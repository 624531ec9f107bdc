package feedback

import (
	"net/netip"
	"testing"
)

func TestModuleLine(t *testing.T) {
	v4 := netip.MustParseAddrPort("10.0.1.2:80")
	v6 := netip.MustParseAddrPort("[2001:db8:1::2]:8080")
	for _, tt := range []struct {
		protocol, vip string
		port          int
		fwmark        uint32
		dest          netip.AddrPort
		want          string
	}{
		{"tcp", "10.0.0.10", 80, 0, v4, "tcp 10.0.0.10:80 10.0.1.2:80 500"},
		{"udp", "2001:db8::10", 53, 0, v6, "udp [2001:db8::10]:53 [2001:db8:1::2]:8080 500"},
		{"tcp", "", 0, 0x46000001, v6, "fwm 1174405121 [2001:db8:1::2]:8080 500"},
	} {
		if got := moduleLine(tt.protocol, tt.vip, tt.port, tt.fwmark, tt.dest, 500); got != tt.want {
			t.Errorf("moduleLine = %q, want %q", got, tt.want)
		}
	}
}
