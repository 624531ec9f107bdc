package realserver

import (
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"
)

// equateNet lets cmp compare netip values (which have unexported fields).
var equateNet = cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{})

// fakeHost is an in-memory Host. It records every change it makes, one
// line each, in calls; a call listed in fail returns that error instead.
type fakeHost struct {
	sysctls map[string]string
	addrs   map[string][]netip.Prefix
	links   map[string]LinkStatus
	// noFallback makes AddTunnel create the device itself (created=true),
	// as when fb_tunnels_only_for_init_net keeps the module's out.
	noFallback bool
	tunnelErr  error
	fail       map[string]error
	id         Identity
	calls      []string
}

// newFakeHost is a booted host: lo up with 127.0.0.1, kernel defaults for
// the sysctls, strict rp_filter as many distributions set it.
func newFakeHost() *fakeHost {
	return &fakeHost{
		sysctls: map[string]string{
			"net.ipv4.conf.all.arp_ignore":   "0",
			"net.ipv4.conf.all.arp_announce": "0",
			"net.ipv4.conf.all.rp_filter":    "1",
			"net.ipv4.conf.lo.arp_ignore":    "0",
			"net.ipv4.conf.lo.arp_announce":  "0",
			"net.ipv4.conf.lo.rp_filter":     "1",
		},
		addrs: map[string][]netip.Prefix{"lo": {netip.MustParsePrefix("127.0.0.1/8")}},
		links: map[string]LinkStatus{"lo": {Exists: true, Up: true}},
		fail:  map[string]error{},
		id:    Identity{BootID: "boot-1", NetNS: "net:[4026531840]"},
	}
}

// snapshot is the host state that must come back after the last remove.
type snapshot struct {
	Sysctls map[string]string
	Addrs   map[string][]netip.Prefix
	Links   map[string]LinkStatus
}

func (h *fakeHost) snapshot() snapshot {
	s := snapshot{Sysctls: maps.Clone(h.sysctls), Addrs: map[string][]netip.Prefix{}, Links: maps.Clone(h.links)}
	for dev, addrs := range h.addrs {
		if len(addrs) > 0 {
			s.Addrs[dev] = slices.Clone(addrs)
		}
	}
	return s
}

func (h *fakeHost) do(call string, change func()) error {
	if err := h.fail[call]; err != nil {
		return err
	}
	h.calls = append(h.calls, call)
	change()
	return nil
}

func (h *fakeHost) Sysctl(name string) (string, error) {
	v, ok := h.sysctls[name]
	if !ok {
		return "", fmt.Errorf("sysctl %s: %w", name, fs.ErrNotExist)
	}
	return v, nil
}

func (h *fakeHost) SetSysctl(name, value string) error {
	if _, ok := h.sysctls[name]; !ok {
		return fmt.Errorf("sysctl %s: %w", name, fs.ErrNotExist)
	}
	return h.do("sysctl "+name+"="+value, func() { h.sysctls[name] = value })
}

func (h *fakeHost) Addrs(dev string) ([]netip.Prefix, error) {
	if !h.links[dev].Exists {
		return nil, fmt.Errorf("device %s: Link not found", dev)
	}
	return slices.Clone(h.addrs[dev]), nil
}

func (h *fakeHost) AddAddr(dev string, p netip.Prefix) error {
	if slices.Contains(h.addrs[dev], p) {
		return fmt.Errorf("address %s on %s: file exists", p, dev)
	}
	return h.do(fmt.Sprintf("addr add %s dev %s", p, dev), func() { h.addrs[dev] = append(h.addrs[dev], p) })
}

func (h *fakeHost) DelAddr(dev string, p netip.Prefix) error {
	if !slices.Contains(h.addrs[dev], p) {
		return fmt.Errorf("address %s on %s: cannot assign requested address", p, dev)
	}
	return h.do(fmt.Sprintf("addr del %s dev %s", p, dev), func() {
		h.addrs[dev] = slices.DeleteFunc(h.addrs[dev], func(q netip.Prefix) bool { return q == p })
	})
}

func (h *fakeHost) Link(name string) (LinkStatus, error) { return h.links[name], nil }

func (h *fakeHost) SetLinkUp(name string, up bool) error {
	if !h.links[name].Exists {
		return fmt.Errorf("device %s: Link not found", name)
	}
	state := map[bool]string{true: "up", false: "down"}[up]
	return h.do("link "+name+" "+state, func() { h.links[name] = LinkStatus{Exists: true, Up: up} })
}

func (h *fakeHost) AddTunnel(name string) (bool, error) {
	if h.tunnelErr != nil {
		return false, h.tunnelErr
	}
	call := "modprobe for " + name
	if h.noFallback {
		call = "tunnel add " + name
	}
	err := h.do(call, func() {
		h.links[name] = LinkStatus{Exists: true}
		if name == Tunnel4 {
			h.sysctls["net.ipv4.conf.tunl0.rp_filter"] = "1"
		}
	})
	return h.noFallback && err == nil, err
}

func (h *fakeHost) DelLink(name string) error {
	if !h.links[name].Exists {
		return fmt.Errorf("device %s: Link not found", name)
	}
	return h.do("link del "+name, func() {
		delete(h.links, name)
		delete(h.addrs, name)
		for k := range h.sysctls {
			if strings.HasPrefix(k, "net.ipv4.conf."+name+".") {
				delete(h.sysctls, k)
			}
		}
	})
}

func (h *fakeHost) Identity() (Identity, error) { return h.id, nil }

// newManager is a Manager of h with a state file in a temporary directory.
func newManager(t *testing.T, h *fakeHost) *Manager {
	t.Helper()
	return &Manager{Host: h, Store: &Store{Path: filepath.Join(t.TempDir(), "state", "state.json")}}
}

// run performs one command, written like the command line without the
// program name: "add dr VIP...", "remove VIP...", "remove --force VIP...".
func run(t *testing.T, m *Manager, command string) ([]string, error) {
	t.Helper()
	words := strings.Fields(command)
	var vips []netip.Addr
	parseVIPs := func(args []string) {
		for _, a := range args {
			vips = append(vips, netip.MustParseAddr(a))
		}
	}
	switch {
	case words[0] == "add":
		parseVIPs(words[2:])
		return m.Add(vips, Mode(words[1]))
	case words[0] == "remove" && len(words) > 1 && words[1] == "--force":
		parseVIPs(words[2:])
		return m.Remove(vips, true)
	case words[0] == "remove":
		parseVIPs(words[1:])
		return m.Remove(vips, false)
	}
	t.Fatalf("bad test command %q", command)
	return nil, nil
}
