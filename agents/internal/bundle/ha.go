package bundle

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
)

// HAFile tells the node agent about the node's VRRP high availability:
// where keepalived's notify FIFO and the track files are, and each HA
// group's interface and VIPs. Only nodes in an HA group have it.
const HAFile = KeepalivedDir + "/ha.json"

// HA is the content of keepalived.d/ha.json.
type HA struct {
	// Node is the node's name.
	Node string `json:"node"`
	// RunDir is the directory the agent and keepalived share (the
	// compiler's /run/fulcrum-agent/<node>); it holds FIFO and the track
	// files.
	RunDir string `json:"run_dir"`
	// FIFO is keepalived's vrrp_notify_fifo.
	FIFO string `json:"fifo"`
	// Standby is the operator's request that this node hold no VIPs.
	Standby bool `json:"standby"`
	// TrackFiles are the files keepalived's vrrp_track_file blocks watch.
	TrackFiles TrackFiles `json:"track_files"`
	// Groups lists the HA groups the node is in, one vrrp_instance each.
	Groups []HAGroup `json:"groups"`
}

// TrackFiles are the track files the agent writes: "0" keeps the node in
// service, "1" puts every VRRP instance that tracks the file in FAULT.
type TrackFiles struct {
	// Standby holds "1" while an operator asks the node to stand by.
	Standby string `json:"standby"`
	// HAProxy holds "1" while HAProxy is not running; empty when the node
	// runs no HAProxy service.
	HAProxy string `json:"haproxy,omitempty"`
}

// HAGroup is one HA group as the node sees it: its vrrp_instance (named
// after the group) and the VIPs that move with it.
type HAGroup struct {
	// Name is the group's name and the vrrp_instance's.
	Name string `json:"name"`
	// VRID is the virtual router id, 1 to 255.
	VRID int `json:"vrid"`
	// Interface is where VRRP runs and the VIPs are added.
	Interface string `json:"interface"`
	// Priority is this node's configured priority.
	Priority int `json:"priority"`
	// AdvertMS is the advertisement interval in milliseconds.
	AdvertMS int `json:"advert_ms"`
	// VIPs are the virtual addresses with their prefix, e.g.
	// "10.77.100.10/32".
	VIPs []string `json:"vips"`
	// Peers are the other nodes' unicast addresses.
	Peers []string `json:"peers"`
	// TrackInterfaces are the other interfaces whose loss puts the
	// instance in FAULT (the group's own always does).
	TrackInterfaces []string `json:"track_interfaces"`
	// Witness is an address that must answer ping for the node to be
	// master; empty when the group has none.
	Witness string `json:"witness"`
}

// interfaceName is the compiler's rule for interface names (rules.py
// INTERFACE_RE): at most 15 characters, which is also the kernel's limit.
// It also keeps a name from being taken for an option of ip.
var interfaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,14}$`)

// ParseHA decodes and validates ha.json. The FIFO and the track files
// must sit directly in RunDir, an absolute clean path, since the agent
// creates and writes them as root.
func ParseHA(text string) (HA, error) {
	var h HA
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return HA{}, fmt.Errorf("%s: %w", HAFile, err)
	}
	if err := h.validate(); err != nil {
		return HA{}, fmt.Errorf("%s: %w", HAFile, err)
	}
	return h, nil
}

func (h HA) validate() error {
	switch {
	case !apiName.MatchString(h.Node):
		return fmt.Errorf("node %q: want a name matching %s", h.Node, apiName)
	case !filepath.IsAbs(h.RunDir) || filepath.Clean(h.RunDir) != h.RunDir || h.RunDir == "/":
		return fmt.Errorf("run_dir %q: want an absolute, clean directory path", h.RunDir)
	}
	files := map[string]string{"fifo": h.FIFO, "track_files.standby": h.TrackFiles.Standby}
	if h.TrackFiles.HAProxy != "" {
		files["track_files.haproxy"] = h.TrackFiles.HAProxy
	}
	for field, path := range files {
		if filepath.Dir(path) != h.RunDir || !includeLeaf.MatchString(filepath.Base(path)) {
			return fmt.Errorf("%s %q: want a file directly in run_dir %s", field, path, h.RunDir)
		}
	}
	seen := map[string]bool{}
	for i, g := range h.Groups {
		if err := g.validate(); err != nil {
			return fmt.Errorf("groups/%d (%q): %w", i, g.Name, err)
		}
		if seen[g.Name] {
			return fmt.Errorf("groups/%d: group %q listed twice", i, g.Name)
		}
		seen[g.Name] = true
	}
	return nil
}

func (g HAGroup) validate() error {
	switch {
	case !apiName.MatchString(g.Name):
		return fmt.Errorf("name: want a name matching %s", apiName)
	case g.VRID < 1 || g.VRID > 255:
		return fmt.Errorf("vrid %d: want 1 to 255", g.VRID)
	case !interfaceName.MatchString(g.Interface):
		return fmt.Errorf("interface %q: want a name matching %s", g.Interface, interfaceName)
	case g.Priority < 1 || g.Priority > 255:
		return fmt.Errorf("priority %d: want 1 to 255", g.Priority)
	case g.AdvertMS < 1:
		return fmt.Errorf("advert_ms %d: want 1 or more", g.AdvertMS)
	}
	if _, err := g.Prefixes(); err != nil {
		return err
	}
	for _, name := range g.TrackInterfaces {
		if !interfaceName.MatchString(name) {
			return fmt.Errorf("track_interfaces: %q: want a name matching %s", name, interfaceName)
		}
	}
	for _, p := range g.Peers {
		if a, err := netip.ParseAddr(p); err != nil || a.Zone() != "" {
			return fmt.Errorf("peer %q: want an IP address", p)
		}
	}
	if a, err := netip.ParseAddr(g.Witness); g.Witness != "" && (err != nil || a.Zone() != "") {
		return fmt.Errorf("witness %q: want an IP address or nothing", g.Witness)
	}
	return nil
}

// Prefixes returns the VIPs as prefixes, the address bits kept (the form
// ip addr prints: 10.77.100.10/24, not 10.77.100.0/24).
func (g HAGroup) Prefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(g.VIPs))
	for _, v := range g.VIPs {
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Addr().Zone() != "" {
			return nil, fmt.Errorf("vip %q: want an address with its prefix length, e.g. 10.0.0.10/32", v)
		}
		out = append(out, p)
	}
	return out, nil
}
