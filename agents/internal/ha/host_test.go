package ha

import (
	"context"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAddresses(t *testing.T) {
	out := []byte(`[{"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8,"scope":"host"}]},
	{"ifindex":2,"ifname":"eth0","addr_info":[{"family":"inet","local":"10.77.1.3","prefixlen":24,"scope":"global"},
	 {"family":"inet","local":"10.77.100.10","prefixlen":32,"scope":"global"},
	 {"family":"inet6","local":"fe80::1","prefixlen":64,"scope":"link"}]},
	{"ifindex":3,"ifname":"eth1","addr_info":[]}]`)
	got, err := ParseAddresses(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]netip.Prefix{
		"lo":   {netip.MustParsePrefix("127.0.0.1/8")},
		"eth0": {netip.MustParsePrefix("10.77.1.3/24"), netip.MustParsePrefix("10.77.100.10/32"), netip.MustParsePrefix("fe80::1/64")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("addresses mismatch (-want +got):\n%s", diff)
	}
	if _, err := ParseAddresses([]byte("Cannot open netlink socket")); err == nil {
		t.Error("garbage must be an error")
	}
}

// TestCommands runs the real ip and ping in the test's own namespace.
func TestCommands(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	ctx := context.Background()
	c := Commands{}
	addrs, err := c.Addresses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(addrs["lo"][:1], []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })) {
		t.Errorf("lo has %v, want 127.0.0.1/8 first", addrs["lo"])
	}
	if up, err := c.LinkUp(ctx, "lo"); err != nil || !up {
		t.Errorf("LinkUp(lo) = %v, %v; want up", up, err)
	}
	if _, err := c.LinkUp(ctx, "nosuchdev0"); err == nil || !strings.Contains(err.Error(), "nosuchdev0") {
		t.Errorf("LinkUp of a missing device: %v, want ip's complaint", err)
	}
	if err := c.DeleteAddress(ctx, "lo", netip.MustParsePrefix("192.0.2.77/32")); err == nil {
		t.Error("deleting an address lo does not have succeeded")
	}
	if _, err := exec.LookPath("/usr/bin/ping"); err == nil && !c.Ping(ctx, "127.0.0.1") {
		t.Error("127.0.0.1 does not answer ping")
	}
}
