package realserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/netip"
	"slices"
	"text/tabwriter"
)

// Status is what the state file records next to what the host shows now.
type Status struct {
	// StateFile is the file read.
	StateFile string `json:"state_file"`
	// Note says why the file was ignored, if it was.
	Note string `json:"note,omitempty"`
	// VIPs, Sysctls and Links are in order of address or name.
	VIPs    []VIPStatus    `json:"vips"`
	Sysctls []SysctlStatus `json:"sysctls"`
	Links   []LinkReport   `json:"links"`
	// Problems lists where the host no longer matches the record (an
	// address gone, a sysctl changed, a device down); add repairs them.
	Problems []string `json:"problems,omitempty"`
}

// VIPStatus is one recorded VIP.
type VIPStatus struct {
	// VIP is the address.
	VIP netip.Addr `json:"vip"`
	VIPState
	// Present reports whether the address is on Device now.
	Present bool `json:"present"`
}

// SysctlStatus is one recorded sysctl.
type SysctlStatus struct {
	// Name is the sysctl, as in sysctl(8).
	Name string `json:"name"`
	SysctlState
	// Current is its value now, empty if it no longer exists.
	Current string `json:"current"`
}

// LinkReport is one recorded device.
type LinkReport struct {
	// Name is the device.
	Name string `json:"name"`
	LinkState
	LinkStatus
}

// Status reads the state file (without locking it) and the host.
func (m *Manager) Status() (Status, error) {
	st, err := m.Store.Read()
	if err != nil {
		return Status{}, err
	}
	out := Status{StateFile: m.Store.Path, VIPs: []VIPStatus{}, Sysctls: []SysctlStatus{}, Links: []LinkReport{}}
	if out.Note, err = m.checkIdentity(st); err != nil {
		return out, err
	}
	for _, vip := range slices.SortedFunc(maps.Keys(st.VIPs), netip.Addr.Compare) {
		v, err := m.vipStatus(vip, st.VIPs[vip])
		if err != nil {
			return out, err
		}
		out.VIPs = append(out.VIPs, v)
		if !v.Present {
			out.Problems = append(out.Problems, fmt.Sprintf("%s is missing from %s", prefixOf(vip), v.Device))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Sysctls)) {
		rec := st.Sysctls[name]
		current, err := m.Host.Sysctl(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
		out.Sysctls = append(out.Sysctls, SysctlStatus{Name: name, SysctlState: rec, Current: current})
		if current != rec.Value {
			out.Problems = append(out.Problems, fmt.Sprintf("%s is %q, want %s", name, current, rec.Value))
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(st.Links)) {
		link, err := m.Host.Link(dev)
		if err != nil {
			return out, err
		}
		out.Links = append(out.Links, LinkReport{Name: dev, LinkState: st.Links[dev], LinkStatus: link})
		if !link.Up {
			out.Problems = append(out.Problems, fmt.Sprintf("%s is down or missing", dev))
		}
	}
	return out, nil
}

func (m *Manager) vipStatus(vip netip.Addr, rec VIPState) (VIPStatus, error) {
	v := VIPStatus{VIP: vip, VIPState: rec}
	link, err := m.Host.Link(rec.Device)
	if err != nil || !link.Exists {
		return v, err
	}
	addrs, err := m.Host.Addrs(rec.Device)
	v.Present = slices.Contains(addrs, prefixOf(vip))
	return v, err
}

// WriteText writes the status as tables for people.
func (s Status) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "state file: %s\n", s.StateFile)
	if s.Note != "" {
		fmt.Fprintf(tw, "note: %s\n", s.Note)
	}
	if len(s.VIPs) == 0 {
		fmt.Fprintln(tw, "no VIPs configured")
	} else {
		fmt.Fprintln(tw, "\nVIP\tMODE\tDEVICE\tADDED BY US\tPRESENT")
		for _, v := range s.VIPs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", prefixOf(v.VIP), v.Mode, v.Device, yesNo(v.Added), yesNo(v.Present))
		}
	}
	if len(s.Sysctls) > 0 {
		fmt.Fprintln(tw, "\nSYSCTL\tSET TO\tPREVIOUS\tCURRENT")
		for _, c := range s.Sysctls {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Value, c.Previous, c.Current)
		}
	}
	if len(s.Links) > 0 {
		fmt.Fprintln(tw, "\nDEVICE\tCREATED BY US\tSET UP BY US\tUP")
		for _, l := range s.Links {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Name, yesNo(l.Created), yesNo(l.SetUp), yesNo(l.Up))
		}
	}
	for i, p := range s.Problems {
		if i == 0 {
			fmt.Fprintln(tw, "\nproblems (add repairs them):")
		}
		fmt.Fprintf(tw, "  %s\n", p)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
