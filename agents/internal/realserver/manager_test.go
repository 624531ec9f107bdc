package realserver

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The ARP sysctls as add sets them and remove restores them on newFakeHost.
var (
	setARP = []string{
		"sysctl net.ipv4.conf.all.arp_announce=2",
		"sysctl net.ipv4.conf.all.arp_ignore=1",
		"sysctl net.ipv4.conf.lo.arp_announce=2",
		"sysctl net.ipv4.conf.lo.arp_ignore=1",
	}
	restoreARP = []string{
		"sysctl net.ipv4.conf.all.arp_announce=0",
		"sysctl net.ipv4.conf.all.arp_ignore=0",
		"sysctl net.ipv4.conf.lo.arp_announce=0",
		"sysctl net.ipv4.conf.lo.arp_ignore=0",
	}
	recordedARP = map[string]SysctlState{
		"net.ipv4.conf.all.arp_announce": {Previous: "0", Value: "2"},
		"net.ipv4.conf.all.arp_ignore":   {Previous: "0", Value: "1"},
		"net.ipv4.conf.lo.arp_announce":  {Previous: "0", Value: "2"},
		"net.ipv4.conf.lo.arp_ignore":    {Previous: "0", Value: "1"},
	}
)

func calls(groups ...[]string) []string {
	var all []string
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

func TestAdd(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(h *fakeHost)
		command   string
		wantCalls []string
		wantState State
	}{
		{
			name:      "dr IPv4",
			command:   "add dr 192.0.2.10",
			wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"}),
			wantState: State{
				VIPs:    map[netip.Addr]VIPState{netip.MustParseAddr("192.0.2.10"): {Mode: ModeDR, Device: "lo", Added: true}},
				Sysctls: recordedARP,
				Links:   map[string]LinkState{"lo": {}},
			},
		},
		{
			name:      "dr IPv6 needs no sysctl",
			command:   "add dr 2001:db8::10",
			wantCalls: []string{"addr add 2001:db8::10/128 dev lo"},
			wantState: State{
				VIPs:  map[netip.Addr]VIPState{netip.MustParseAddr("2001:db8::10"): {Mode: ModeDR, Device: "lo", Added: true}},
				Links: map[string]LinkState{"lo": {}},
			},
		},
		{
			name:    "lo down, as in a fresh network namespace",
			setup:   func(h *fakeHost) { h.links["lo"] = LinkStatus{Exists: true} },
			command: "add dr 192.0.2.10 192.0.2.11",
			wantCalls: calls([]string{"link lo up"}, setARP,
				[]string{"addr add 192.0.2.10/32 dev lo", "addr add 192.0.2.11/32 dev lo"}),
			wantState: State{
				VIPs: map[netip.Addr]VIPState{
					netip.MustParseAddr("192.0.2.10"): {Mode: ModeDR, Device: "lo", Added: true},
					netip.MustParseAddr("192.0.2.11"): {Mode: ModeDR, Device: "lo", Added: true},
				},
				Sysctls: recordedARP,
				Links:   map[string]LinkState{"lo": {SetUp: true}},
			},
		},
		{
			name:    "tun IPv4 loads ipip, sets tunl0 up, turns rp_filter off",
			command: "add tun 192.0.2.10",
			wantCalls: []string{
				"modprobe for tunl0", "link tunl0 up",
				"sysctl net.ipv4.conf.all.arp_announce=2",
				"sysctl net.ipv4.conf.all.arp_ignore=1",
				"sysctl net.ipv4.conf.all.rp_filter=0",
				"sysctl net.ipv4.conf.lo.arp_announce=2",
				"sysctl net.ipv4.conf.lo.arp_ignore=1",
				"sysctl net.ipv4.conf.tunl0.rp_filter=0",
				"addr add 192.0.2.10/32 dev tunl0",
			},
			wantState: State{
				VIPs: map[netip.Addr]VIPState{netip.MustParseAddr("192.0.2.10"): {Mode: ModeTUN, Device: "tunl0", Added: true}},
				Sysctls: map[string]SysctlState{
					"net.ipv4.conf.all.arp_announce": {Previous: "0", Value: "2"},
					"net.ipv4.conf.all.arp_ignore":   {Previous: "0", Value: "1"},
					"net.ipv4.conf.all.rp_filter":    {Previous: "1", Value: "0"},
					"net.ipv4.conf.lo.arp_announce":  {Previous: "0", Value: "2"},
					"net.ipv4.conf.lo.arp_ignore":    {Previous: "0", Value: "1"},
					"net.ipv4.conf.tunl0.rp_filter":  {Previous: "1", Value: "0"},
				},
				Links: map[string]LinkState{"tunl0": {SetUp: true}},
			},
		},
		{
			name:      "tun IPv6 uses ip6tnl0 and no sysctl",
			setup:     func(h *fakeHost) { h.noFallback = true },
			command:   "add tun 2001:db8::10",
			wantCalls: []string{"tunnel add ip6tnl0", "link ip6tnl0 up", "addr add 2001:db8::10/128 dev ip6tnl0"},
			wantState: State{
				VIPs:  map[netip.Addr]VIPState{netip.MustParseAddr("2001:db8::10"): {Mode: ModeTUN, Device: "ip6tnl0", Added: true}},
				Links: map[string]LinkState{"ip6tnl0": {Created: true, SetUp: true}},
			},
		},
		{
			name: "sysctls and address already there: nothing to change",
			setup: func(h *fakeHost) {
				for name, rec := range recordedARP {
					h.sysctls[name] = rec.Value
				}
				h.addrs["lo"] = append(h.addrs["lo"], netip.MustParsePrefix("192.0.2.10/32"))
			},
			command: "add dr 192.0.2.10",
			wantState: State{
				VIPs: map[netip.Addr]VIPState{netip.MustParseAddr("192.0.2.10"): {Mode: ModeDR, Device: "lo", Added: false}},
				Sysctls: map[string]SysctlState{
					"net.ipv4.conf.all.arp_announce": {Previous: "2", Value: "2"},
					"net.ipv4.conf.all.arp_ignore":   {Previous: "1", Value: "1"},
					"net.ipv4.conf.lo.arp_announce":  {Previous: "2", Value: "2"},
					"net.ipv4.conf.lo.arp_ignore":    {Previous: "1", Value: "1"},
				},
				Links: map[string]LinkState{"lo": {}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			if tt.setup != nil {
				tt.setup(h)
			}
			m := newManager(t, h)
			if _, err := run(t, m, tt.command); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantCalls, h.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			got, err := m.Store.Read()
			if err != nil {
				t.Fatal(err)
			}
			tt.wantState.Identity = h.id
			tt.wantState.init()
			if diff := cmp.Diff(&tt.wantState, got, equateNet); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

// step is one command of a scenario, with the host calls it must make.
type step struct {
	command   string
	before    func(h *fakeHost) // changes behind the program's back
	wantCalls []string
	wantErr   string
}

// TestScenarios: sequences of add and remove on one host; after the last
// step the host must be exactly as it was and the state file gone.
func TestScenarios(t *testing.T) {
	moduleLoaded := func(h *fakeHost) {
		h.links["tunl0"] = LinkStatus{Exists: true}
		h.sysctls["net.ipv4.conf.tunl0.rp_filter"] = "1"
	}
	tests := []struct {
		name  string
		setup func(h *fakeHost)
		steps []step
	}{
		{
			name: "two VIPs: removing one keeps the sysctls, removing the last restores them",
			steps: []step{
				{command: "add dr 192.0.2.10 192.0.2.11", wantCalls: calls(setARP,
					[]string{"addr add 192.0.2.10/32 dev lo", "addr add 192.0.2.11/32 dev lo"})},
				{command: "remove 192.0.2.10", wantCalls: []string{"addr del 192.0.2.10/32 dev lo"}},
				{command: "remove 192.0.2.11", wantCalls: calls([]string{"addr del 192.0.2.11/32 dev lo"}, restoreARP)},
			},
		},
		{
			name: "adding twice is adding once",
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "add dr 192.0.2.10"},
				{command: "remove 192.0.2.10", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
		{
			name:  "dr and tun share the ARP sysctls; rp_filter and tunl0 go with the tun VIP",
			setup: moduleLoaded,
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "add tun 192.0.2.20", wantCalls: []string{
					"link tunl0 up",
					"sysctl net.ipv4.conf.all.rp_filter=0",
					"sysctl net.ipv4.conf.tunl0.rp_filter=0",
					"addr add 192.0.2.20/32 dev tunl0",
				}},
				{command: "remove 192.0.2.20", wantCalls: []string{
					"addr del 192.0.2.20/32 dev tunl0",
					"sysctl net.ipv4.conf.all.rp_filter=1",
					"sysctl net.ipv4.conf.tunl0.rp_filter=1",
					"link tunl0 down",
				}},
				{command: "remove 192.0.2.10", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
		{
			name:  "a tunnel device this program created is deleted with its last VIP",
			setup: func(h *fakeHost) { h.noFallback = true },
			steps: []step{
				{command: "add tun 192.0.2.20 192.0.2.21", wantCalls: []string{
					"tunnel add tunl0", "link tunl0 up",
					"sysctl net.ipv4.conf.all.arp_announce=2",
					"sysctl net.ipv4.conf.all.arp_ignore=1",
					"sysctl net.ipv4.conf.all.rp_filter=0",
					"sysctl net.ipv4.conf.lo.arp_announce=2",
					"sysctl net.ipv4.conf.lo.arp_ignore=1",
					"sysctl net.ipv4.conf.tunl0.rp_filter=0",
					"addr add 192.0.2.20/32 dev tunl0",
					"addr add 192.0.2.21/32 dev tunl0",
				}},
				{command: "remove 192.0.2.21 192.0.2.20", wantCalls: []string{
					"addr del 192.0.2.20/32 dev tunl0",
					"addr del 192.0.2.21/32 dev tunl0",
					"sysctl net.ipv4.conf.all.arp_announce=0",
					"sysctl net.ipv4.conf.all.arp_ignore=0",
					"sysctl net.ipv4.conf.all.rp_filter=1",
					"sysctl net.ipv4.conf.lo.arp_announce=0",
					"sysctl net.ipv4.conf.lo.arp_ignore=0",
					"sysctl net.ipv4.conf.tunl0.rp_filter=1",
					"link del tunl0",
				}},
			},
		},
		{
			name: "lo set up by add is set down by the last remove",
			setup: func(h *fakeHost) {
				h.links["lo"] = LinkStatus{Exists: true}
			},
			steps: []step{
				{command: "add dr 2001:db8::10", wantCalls: []string{"link lo up", "addr add 2001:db8::10/128 dev lo"}},
				{command: "remove 2001:db8::10", wantCalls: []string{"addr del 2001:db8::10/128 dev lo", "link lo down"}},
			},
		},
		{
			name: "a VIP cannot change mode without a remove",
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "add tun 192.0.2.10", wantErr: "192.0.2.10 is configured for dr; remove it before adding it for tun"},
				{command: "remove 192.0.2.10", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
		{
			name: "an unknown VIP fails the whole remove unless forced",
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "remove 192.0.2.10 192.0.2.99", wantErr: "VIP 192.0.2.99 was not added by fulcrum-realserver"},
				{command: "remove --force 192.0.2.10 192.0.2.99", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
				{command: "remove --force 192.0.2.10"},
			},
		},
		{
			name: "an address that was there before add stays",
			setup: func(h *fakeHost) {
				h.addrs["lo"] = append(h.addrs["lo"], netip.MustParsePrefix("192.0.2.10/32"))
			},
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: setARP},
				{command: "remove 192.0.2.10", wantCalls: restoreARP},
			},
		},
		{
			name: "drift is repaired by add; remove restores the recorded value",
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{
					command: "add dr 192.0.2.10",
					before: func(h *fakeHost) {
						h.sysctls["net.ipv4.conf.all.arp_ignore"] = "0"
						h.addrs["lo"] = h.addrs["lo"][:1]
					},
					wantCalls: []string{"sysctl net.ipv4.conf.all.arp_ignore=1", "addr add 192.0.2.10/32 dev lo"},
				},
				{
					command:   "remove 192.0.2.10",
					before:    func(h *fakeHost) { h.sysctls["net.ipv4.conf.all.arp_announce"] = "1" },
					wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP),
				},
			},
		},
		{
			name: "a failed add undoes itself",
			setup: func(h *fakeHost) {
				h.fail["addr add 192.0.2.11/32 dev lo"] = errors.New("injected failure")
			},
			steps: []step{
				{command: "add dr 192.0.2.10 192.0.2.11", wantErr: "injected failure", wantCalls: calls(
					setARP, []string{"addr add 192.0.2.10/32 dev lo", "addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
		{
			name: "a failed add keeps what earlier adds did",
			setup: func(h *fakeHost) {
				h.tunnelErr = errors.New("tunl0 is missing and cannot be made")
			},
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "add tun 192.0.2.20", wantErr: "tunl0 is missing"},
				{command: "remove 192.0.2.10", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			if tt.setup != nil {
				tt.setup(h)
			}
			initial := h.snapshot()
			m := newManager(t, h)
			for _, s := range tt.steps {
				runStep(t, m, h, s)
			}
			if diff := cmp.Diff(initial, h.snapshot(), equateNet); diff != "" {
				t.Errorf("host not restored (-before +after):\n%s", diff)
			}
			if _, err := os.Stat(m.Store.Path); !os.IsNotExist(err) {
				t.Errorf("state file left behind (stat: %v)", err)
			}
		})
	}
}

func runStep(t *testing.T, m *Manager, h *fakeHost, s step) {
	t.Helper()
	if s.before != nil {
		s.before(h)
	}
	h.calls = nil
	_, err := run(t, m, s.command)
	switch {
	case s.wantErr == "" && err != nil:
		t.Fatalf("%s: %v", s.command, err)
	case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
		t.Fatalf("%s: error %v, want one containing %q", s.command, err, s.wantErr)
	}
	if diff := cmp.Diff(s.wantCalls, h.calls); diff != "" {
		t.Errorf("%s: calls (-want +got):\n%s", s.command, diff)
	}
}

func TestRemoveUnknownVIPError(t *testing.T) {
	m := newManager(t, newFakeHost())
	_, err := run(t, m, "remove 192.0.2.10")
	var unknown *UnknownVIPError
	if !errors.As(err, &unknown) || unknown.VIP != netip.MustParseAddr("192.0.2.10") {
		t.Errorf("err = %v, want *UnknownVIPError for 192.0.2.10", err)
	}
}

// TestStateAfterCrash: a state file left by an interrupted run is completed
// by the next add or undone by the next remove.
func TestStateAfterCrash(t *testing.T) {
	vip := netip.MustParseAddr("192.0.2.10")
	tests := []struct {
		name string
		// state is what the interrupted run left; the host is newFakeHost
		// changed by host.
		state State
		host  func(h *fakeHost)
		steps []step
	}{
		{
			name: "add recorded everything, then died before changing anything",
			state: State{
				VIPs:    map[netip.Addr]VIPState{vip: {Mode: ModeDR, Device: "lo", Added: true}},
				Sysctls: recordedARP,
				Links:   map[string]LinkState{"lo": {}},
			},
			steps: []step{
				{command: "add dr 192.0.2.10", wantCalls: calls(setARP, []string{"addr add 192.0.2.10/32 dev lo"})},
				{command: "remove 192.0.2.10", wantCalls: calls([]string{"addr del 192.0.2.10/32 dev lo"}, restoreARP)},
			},
		},
		{
			name: "add recorded the address and died before adding it: remove copes",
			state: State{
				VIPs:    map[netip.Addr]VIPState{vip: {Mode: ModeDR, Device: "lo", Added: true}},
				Sysctls: recordedARP,
				Links:   map[string]LinkState{"lo": {}},
			},
			host: func(h *fakeHost) {
				for name, rec := range recordedARP {
					h.sysctls[name] = rec.Value
				}
			},
			steps: []step{
				{command: "remove 192.0.2.10", wantCalls: restoreARP},
			},
		},
		{
			name: "remove deleted the address and died: remove --force finishes",
			state: State{
				Sysctls: recordedARP,
				Links:   map[string]LinkState{"lo": {}},
			},
			host: func(h *fakeHost) {
				for name, rec := range recordedARP {
					h.sysctls[name] = rec.Value
				}
			},
			steps: []step{
				{command: "remove 192.0.2.10", wantErr: "not added by fulcrum-realserver"},
				{command: "remove --force", wantCalls: restoreARP},
			},
		},
		{
			name: "a state file from before a reboot is ignored",
			state: State{
				Identity: Identity{BootID: "boot-0", NetNS: "net:[4026531840]"},
				VIPs:     map[netip.Addr]VIPState{vip: {Mode: ModeDR, Device: "lo", Added: true}},
				Sysctls: map[string]SysctlState{
					"net.ipv4.conf.all.arp_ignore": {Previous: "2", Value: "1"},
				},
			},
			steps: []step{
				{command: "remove 192.0.2.10", wantErr: "not added by fulcrum-realserver"},
				{command: "add dr 192.0.2.11", wantCalls: calls(setARP, []string{"addr add 192.0.2.11/32 dev lo"})},
				{command: "remove 192.0.2.11", wantCalls: calls([]string{"addr del 192.0.2.11/32 dev lo"}, restoreARP)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			initial := h.snapshot()
			if tt.host != nil {
				tt.host(h)
			}
			m := newManager(t, h)
			st := tt.state
			if st.BootID == "" {
				st.Identity = h.id
			}
			writeState(t, m.Store, &st)
			for _, s := range tt.steps {
				runStep(t, m, h, s)
			}
			if diff := cmp.Diff(initial, h.snapshot(), equateNet); diff != "" {
				t.Errorf("host not restored (-before +after):\n%s", diff)
			}
		})
	}
}

func writeState(t *testing.T, s *Store, st *State) {
	t.Helper()
	if err := os.MkdirAll(strings.TrimSuffix(s.Path, "/state.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
}

func TestStaleStateIsNoted(t *testing.T) {
	h := newFakeHost()
	m := newManager(t, h)
	writeState(t, m.Store, &State{
		Identity: Identity{BootID: "boot-0", NetNS: h.id.NetNS},
		VIPs:     map[netip.Addr]VIPState{netip.MustParseAddr("192.0.2.10"): {Mode: ModeDR, Device: "lo", Added: true}},
	})
	changes, err := run(t, m, "add dr 2001:db8::10")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ignored " + m.Store.Path + ": written before the last reboot, so what it lists is gone",
		"2001:db8::10/128 added to lo (dr)",
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

func TestStateOfAnotherNamespace(t *testing.T) {
	h := newFakeHost()
	m := newManager(t, h)
	writeState(t, m.Store, &State{
		Identity: Identity{BootID: h.id.BootID, NetNS: "net:[4026532000]"},
		VIPs:     map[netip.Addr]VIPState{netip.MustParseAddr("192.0.2.10"): {Mode: ModeDR, Device: "lo", Added: true}},
	})
	const want = "belongs to network namespace net:[4026532000], this process runs in net:[4026531840]"
	for _, command := range []string{"add dr 192.0.2.11", "remove 192.0.2.10", "remove --force 192.0.2.10"} {
		if _, err := run(t, m, command); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", command, err, want)
		}
	}
	if _, err := m.Status(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("status: error %v, want one containing %q", err, want)
	}
	if len(h.calls) > 0 {
		t.Errorf("host changed: %v", h.calls)
	}
}

func TestChangesReported(t *testing.T) {
	h := newFakeHost()
	h.links["lo"] = LinkStatus{Exists: true}
	m := newManager(t, h)
	added, err := run(t, m, "add dr 192.0.2.10")
	if err != nil {
		t.Fatal(err)
	}
	removed, err := run(t, m, "remove 192.0.2.10")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lo set up",
		"net.ipv4.conf.all.arp_announce = 2 (was 0)",
		"net.ipv4.conf.all.arp_ignore = 1 (was 0)",
		"net.ipv4.conf.lo.arp_announce = 2 (was 0)",
		"net.ipv4.conf.lo.arp_ignore = 1 (was 0)",
		"192.0.2.10/32 added to lo (dr)",
		"--",
		"192.0.2.10/32 removed from lo",
		"net.ipv4.conf.all.arp_announce = 0 restored",
		"net.ipv4.conf.all.arp_ignore = 0 restored",
		"net.ipv4.conf.lo.arp_announce = 0 restored",
		"net.ipv4.conf.lo.arp_ignore = 0 restored",
		"lo set down",
	}
	if diff := cmp.Diff(want, calls(added, []string{"--"}, removed)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}
