package realserver

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVIP(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "192.0.2.10", want: "192.0.2.10"},
		{in: "2001:db8::10", want: "2001:db8::10"},
		{in: "2001:DB8:0::10", want: "2001:db8::10"},
		{in: "192.0.2.10/32", wantErr: "without a prefix length"},
		{in: "", wantErr: "is not an IP address"},
		{in: "192.0.2", wantErr: "is not an IP address"},
		{in: "lb.example.com", wantErr: "is not an IP address"},
		{in: "fe80::1%eth0", wantErr: "has a zone"},
		{in: "::ffff:192.0.2.10", wantErr: "give the IPv4 address 192.0.2.10"},
		{in: "0.0.0.0", wantErr: "is unspecified"},
		{in: "::", wantErr: "is unspecified"},
		{in: "127.0.0.2", wantErr: "is a loopback address"},
		{in: "::1", wantErr: "is a loopback address"},
		{in: "169.254.1.1", wantErr: "is link-local"},
		{in: "fe80::1", wantErr: "is link-local"},
		{in: "224.0.0.1", wantErr: "is multicast"},
		{in: "ff02::1", wantErr: "is multicast"},
		{in: "255.255.255.255", wantErr: "is the broadcast address"},
	}
	for _, tt := range tests {
		got, err := ParseVIP(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseVIP(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil || got.String() != tt.want:
			t.Errorf("ParseVIP(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestParseVIPs(t *testing.T) {
	got, err := ParseVIPs([]string{"192.0.2.10", "2001:db8::10", "192.0.2.10"})
	want := []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}
	if err != nil || !cmp.Equal(want, got, equateNet) {
		t.Errorf("ParseVIPs = %v, %v; want %v (repeats dropped)", got, err, want)
	}
	if _, err := ParseVIPs(nil); err == nil || err.Error() != "no VIP given" {
		t.Errorf("ParseVIPs(nil) error = %v, want no VIP given", err)
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{in: "dr", want: ModeDR},
		{in: "tun", want: ModeTUN},
		{in: "", wantErr: "mode is required: dr or tun"},
		{in: "nat", wantErr: `unknown mode "nat": want dr or tun`},
		{in: "DR", wantErr: `unknown mode "DR"`},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMode(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
		} else if err != nil || got != tt.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestNeedsOf(t *testing.T) {
	v4, v6 := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")
	tunnel4 := map[string]string{
		"net.ipv4.conf.all.arp_announce": "2",
		"net.ipv4.conf.all.arp_ignore":   "1",
		"net.ipv4.conf.all.rp_filter":    "0",
		"net.ipv4.conf.lo.arp_announce":  "2",
		"net.ipv4.conf.lo.arp_ignore":    "1",
		"net.ipv4.conf.tunl0.rp_filter":  "0",
	}
	tests := []struct {
		vip  netip.Addr
		mode Mode
		want needs
	}{
		{v4, ModeDR, needs{device: "lo", sysctls: arpSysctls}},
		{v6, ModeDR, needs{device: "lo", sysctls: map[string]string{}}},
		{v4, ModeTUN, needs{device: "tunl0", tunnel: true, sysctls: tunnel4}},
		{v6, ModeTUN, needs{device: "ip6tnl0", tunnel: true, sysctls: map[string]string{}}},
	}
	for _, tt := range tests {
		got := needsOf(tt.vip, tt.mode)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(needs{})); diff != "" {
			t.Errorf("needsOf(%v, %v) (-want +got):\n%s", tt.vip, tt.mode, diff)
		}
	}
}

func TestStatus(t *testing.T) {
	h := newFakeHost()
	h.links["tunl0"] = LinkStatus{Exists: true}
	h.sysctls["net.ipv4.conf.tunl0.rp_filter"] = "1"
	m := newManager(t, h)
	if _, err := run(t, m, "add dr 192.0.2.10 2001:db8::10"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, m, "add tun 192.0.2.20"); err != nil {
		t.Fatal(err)
	}
	// Drift behind the program's back.
	h.addrs["lo"] = h.addrs["lo"][:2] // 127.0.0.1/8 and 192.0.2.10/32
	h.sysctls["net.ipv4.conf.all.rp_filter"] = "1"
	h.links["tunl0"] = LinkStatus{Exists: true}

	got, err := m.Status()
	if err != nil {
		t.Fatal(err)
	}
	want := Status{
		StateFile: m.Store.Path,
		VIPs: []VIPStatus{
			{VIP: netip.MustParseAddr("192.0.2.10"), VIPState: VIPState{Mode: ModeDR, Device: "lo", Added: true}, Present: true},
			{VIP: netip.MustParseAddr("192.0.2.20"), VIPState: VIPState{Mode: ModeTUN, Device: "tunl0", Added: true}, Present: true},
			{VIP: netip.MustParseAddr("2001:db8::10"), VIPState: VIPState{Mode: ModeDR, Device: "lo", Added: true}},
		},
		Sysctls: []SysctlStatus{
			{Name: "net.ipv4.conf.all.arp_announce", SysctlState: SysctlState{Previous: "0", Value: "2"}, Current: "2"},
			{Name: "net.ipv4.conf.all.arp_ignore", SysctlState: SysctlState{Previous: "0", Value: "1"}, Current: "1"},
			{Name: "net.ipv4.conf.all.rp_filter", SysctlState: SysctlState{Previous: "1", Value: "0"}, Current: "1"},
			{Name: "net.ipv4.conf.lo.arp_announce", SysctlState: SysctlState{Previous: "0", Value: "2"}, Current: "2"},
			{Name: "net.ipv4.conf.lo.arp_ignore", SysctlState: SysctlState{Previous: "0", Value: "1"}, Current: "1"},
			{Name: "net.ipv4.conf.tunl0.rp_filter", SysctlState: SysctlState{Previous: "1", Value: "0"}, Current: "0"},
		},
		Links: []LinkReport{
			{Name: "lo", LinkStatus: LinkStatus{Exists: true, Up: true}},
			{Name: "tunl0", LinkState: LinkState{SetUp: true}, LinkStatus: LinkStatus{Exists: true}},
		},
		Problems: []string{
			"2001:db8::10/128 is missing from lo",
			`net.ipv4.conf.all.rp_filter is "1", want 0`,
			"tunl0 is down or missing",
		},
	}
	if diff := cmp.Diff(want, got, equateNet); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	var text bytes.Buffer
	if err := got.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "status.txt")
	wantText, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gotText := strings.ReplaceAll(text.String(), m.Store.Path, "STATE")
	if diff := cmp.Diff(string(wantText), gotText); diff != "" {
		t.Errorf("WriteText (-%s +got):\n%s", golden, diff)
	}
}

func TestStatusWithoutState(t *testing.T) {
	m := newManager(t, newFakeHost())
	got, err := m.Status()
	if err != nil {
		t.Fatal(err)
	}
	want := Status{StateFile: m.Store.Path, VIPs: []VIPStatus{}, Sysctls: []SysctlStatus{}, Links: []LinkReport{}}
	if diff := cmp.Diff(want, got, equateNet); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Dir(m.Store.Path)); !os.IsNotExist(err) {
		t.Errorf("status created the state directory (stat: %v)", err)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "run", "state.json")}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.Identity = Identity{BootID: "b", NetNS: "n"}
	st.VIPs[netip.MustParseAddr("2001:db8::10")] = VIPState{Mode: ModeTUN, Device: Tunnel6, Added: true}
	st.Sysctls["net.ipv4.conf.all.arp_ignore"] = SysctlState{Previous: "0", Value: "1"}
	st.Links[Tunnel6] = LinkState{Created: true, SetUp: true}
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got, equateNet); diff != "" {
		t.Errorf("Read after Save (-saved +read):\n%s", diff)
	}
	if err := s.Save(&State{Identity: st.Identity}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Errorf("saving an empty state left the file (stat: %v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Path))
	for _, e := range entries {
		if e.Name() != "state.json.lock" {
			t.Errorf("left in the state directory: %s", e.Name())
		}
	}
}

func TestStoreCorrupt(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "state.json")}
	if err := os.WriteFile(s.Path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read()
	if err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("Read of a corrupt file: %v, want an error saying to move it away", err)
	}
}
