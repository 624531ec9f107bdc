package realserver

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"slices"
)

// Manager adds and removes VIPs on the Host, recording in the Store every
// change it makes and what it replaced.
//
// Add acquires, in this order, the device (created or set up if needed),
// the sysctls and then the address, so the VIP never exists while ARP still
// answers for it; Remove releases in the reverse order. A sysctl or device
// shared by several VIPs is acquired by the first and released by the last.
type Manager struct {
	// Host is the machine; Linux{} in production.
	Host Host
	// Store is the state file.
	Store *Store
}

// UnknownVIPError is a VIP that Remove was asked to remove but that the
// state file does not list.
type UnknownVIPError struct {
	// VIP is the address.
	VIP netip.Addr
	// StateFile is the file that does not list it.
	StateFile string
}

// Error implements error.
func (e *UnknownVIPError) Error() string {
	return fmt.Sprintf("VIP %s was not added by fulcrum-realserver (not in %s); use --force to ignore it", e.VIP, e.StateFile)
}

// Add configures vips for mode. A VIP already added for mode is checked and
// repaired where the host has drifted; one added for the other mode is an
// error (remove it first). It returns one line per change made. If a step
// fails, what this call added is undone before the error is returned.
func (m *Manager) Add(vips []netip.Addr, mode Mode) ([]string, error) {
	s, err := m.open()
	if err != nil {
		return nil, err
	}
	defer m.Store.Close()
	for _, vip := range vips {
		if rec, ok := s.st.VIPs[vip]; ok && rec.Mode != mode {
			return s.changes, fmt.Errorf("VIP %s is configured for %s; remove it before adding it for %s", vip, rec.Mode, mode)
		}
	}
	before := maps.Clone(s.st.VIPs)
	want := map[netip.Addr]Mode{}
	for _, vip := range vips {
		want[vip] = mode
	}
	if err := s.acquire(want); err != nil {
		s.note("failed; undoing this add")
		if rerr := s.release(before); rerr != nil {
			return s.changes, fmt.Errorf("%w; undoing it failed too: %v (run remove --force once the cause is fixed)", err, rerr)
		}
		return s.changes, err
	}
	return s.changes, nil
}

// Remove undoes Add for vips: it deletes the addresses Add added and, once
// no remaining VIP needs them, restores the sysctls and devices. A VIP the
// state file does not list is an *UnknownVIPError, unless force, which also
// finishes a removal that was interrupted.
func (m *Manager) Remove(vips []netip.Addr, force bool) ([]string, error) {
	s, err := m.open()
	if err != nil {
		return nil, err
	}
	defer m.Store.Close()
	keep := maps.Clone(s.st.VIPs)
	for _, vip := range vips {
		if _, ok := keep[vip]; !ok && !force {
			return s.changes, &UnknownVIPError{VIP: vip, StateFile: m.Store.Path}
		}
		delete(keep, vip)
	}
	return s.changes, s.release(keep)
}

// session is one Add or Remove: the locked state and the changes made.
type session struct {
	host    Host
	store   *Store
	st      *State
	changes []string
}

// open locks and loads the state, checking it describes this boot and this
// network namespace.
func (m *Manager) open() (*session, error) {
	st, err := m.Store.Load()
	if err != nil {
		return nil, err
	}
	s := &session{host: m.Host, store: m.Store, st: st}
	note, err := m.checkIdentity(st)
	if err != nil {
		m.Store.Close()
		return nil, err
	}
	if note != "" {
		s.note("%s", note)
	}
	return s, nil
}

// checkIdentity compares the state's identity with the host's. A state from
// an earlier boot is dropped (nothing it lists survived the reboot); one from
// another network namespace is an error, since that namespace may still hold
// what it lists. The returned note says what was dropped.
func (m *Manager) checkIdentity(st *State) (string, error) {
	id, err := m.Host.Identity()
	if err != nil {
		return "", err
	}
	var note string
	switch {
	case st.empty():
	case st.BootID != id.BootID:
		note = fmt.Sprintf("ignored %s: written before the last reboot, so what it lists is gone", m.Store.Path)
		*st = State{}
		st.init()
	case st.NetNS != id.NetNS:
		return "", fmt.Errorf("state file %s belongs to network namespace %s, this process runs in %s: give each namespace its own --state",
			m.Store.Path, st.NetNS, id.NetNS)
	}
	st.Identity = id
	return note, nil
}

func (s *session) note(format string, args ...any) {
	s.changes = append(s.changes, fmt.Sprintf(format, args...))
}

func (s *session) save() error { return s.store.Save(s.st) }

// combined is what a set of VIPs needs together.
type combined struct {
	links   map[string]bool // device → is a tunnel
	sysctls map[string]string
}

func combine(vips map[netip.Addr]Mode) combined {
	c := combined{links: map[string]bool{}, sysctls: map[string]string{}}
	for vip, mode := range vips {
		n := needsOf(vip, mode)
		c.links[n.device] = n.tunnel
		maps.Copy(c.sysctls, n.sysctls)
	}
	return c
}

// modes maps recorded VIPs to their modes.
func modes(vips map[netip.Addr]VIPState) map[netip.Addr]Mode {
	m := make(map[netip.Addr]Mode, len(vips))
	for vip, rec := range vips {
		m[vip] = rec.Mode
	}
	return m
}

// acquire makes the host hold every VIP of want.
func (s *session) acquire(want map[netip.Addr]Mode) error {
	need := combine(want)
	for _, dev := range slices.Sorted(maps.Keys(need.links)) {
		if err := s.acquireLink(dev, need.links[dev]); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(need.sysctls)) {
		if err := s.acquireSysctl(name, need.sysctls[name]); err != nil {
			return err
		}
	}
	for _, vip := range slices.SortedFunc(maps.Keys(want), netip.Addr.Compare) {
		if err := s.acquireAddr(vip, want[vip]); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) acquireLink(dev string, tunnel bool) error {
	rec, known := s.st.Links[dev]
	link, err := s.host.Link(dev)
	if err != nil {
		return err
	}
	dirty := !known
	if !link.Exists {
		if !tunnel {
			return fmt.Errorf("device %s does not exist", dev)
		}
		if link, err = s.addTunnel(dev, &rec); err != nil {
			return err
		}
		dirty = true
	}
	if !link.Up {
		rec.SetUp, dirty = true, true
	}
	if dirty {
		s.st.Links[dev] = rec
		if err := s.save(); err != nil {
			return err
		}
	}
	if link.Up {
		return nil
	}
	if err := s.host.SetLinkUp(dev, true); err != nil {
		return err
	}
	s.note("%s set up", dev)
	return nil
}

// addTunnel makes the tunnel device dev exist, noting in rec whether it is
// ours to delete.
func (s *session) addTunnel(dev string, rec *LinkState) (LinkStatus, error) {
	created, err := s.host.AddTunnel(dev)
	if err != nil {
		return LinkStatus{}, err
	}
	rec.Created = created
	if created {
		s.note("%s created", dev)
	} else {
		s.note("%s created by loading its module", dev)
	}
	link, err := s.host.Link(dev)
	if err == nil && !link.Exists {
		err = fmt.Errorf("device %s still does not exist after loading its module", dev)
	}
	return link, err
}

func (s *session) acquireSysctl(name, value string) error {
	current, err := s.host.Sysctl(name)
	if err != nil {
		return err
	}
	if _, known := s.st.Sysctls[name]; !known {
		s.st.Sysctls[name] = SysctlState{Previous: current, Value: value}
		if err := s.save(); err != nil {
			return err
		}
	}
	if current == value {
		return nil
	}
	if err := s.host.SetSysctl(name, value); err != nil {
		return err
	}
	s.note("%s = %s (was %s)", name, value, current)
	return nil
}

func (s *session) acquireAddr(vip netip.Addr, mode Mode) error {
	dev, p := needsOf(vip, mode).device, prefixOf(vip)
	present, err := s.hasAddr(dev, p)
	if err != nil {
		return err
	}
	rec, known := s.st.VIPs[vip]
	if !known || !present {
		// Added stays true for a VIP recorded before a crash that came
		// before the address; an address that was there first is left.
		rec = VIPState{Mode: mode, Device: dev, Added: rec.Added || !present}
		s.st.VIPs[vip] = rec
		if err := s.save(); err != nil {
			return err
		}
	}
	if present {
		if !known {
			s.note("%s was already on %s: kept, and left there by remove", p, dev)
		}
		return nil
	}
	if err := s.host.AddAddr(dev, p); err != nil {
		return err
	}
	s.note("%s added to %s (%s)", p, dev, mode)
	return nil
}

func (s *session) hasAddr(dev string, p netip.Prefix) (bool, error) {
	addrs, err := s.host.Addrs(dev)
	if err != nil {
		return false, err
	}
	return slices.Contains(addrs, p), nil
}

// release undoes every recorded change that keep does not need: addresses
// first, so the VIP is gone before ARP may answer for it again.
func (s *session) release(keep map[netip.Addr]VIPState) error {
	for _, vip := range slices.SortedFunc(maps.Keys(s.st.VIPs), netip.Addr.Compare) {
		if _, ok := keep[vip]; !ok {
			if err := s.releaseAddr(vip); err != nil {
				return err
			}
		}
	}
	need := combine(modes(keep))
	for _, name := range slices.Sorted(maps.Keys(s.st.Sysctls)) {
		if _, ok := need.sysctls[name]; !ok {
			if err := s.releaseSysctl(name); err != nil {
				return err
			}
		}
	}
	for _, dev := range slices.Sorted(maps.Keys(s.st.Links)) {
		if _, ok := need.links[dev]; !ok {
			if err := s.releaseLink(dev); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) releaseAddr(vip netip.Addr) error {
	rec, p := s.st.VIPs[vip], prefixOf(vip)
	link, err := s.host.Link(rec.Device)
	if err != nil {
		return err
	}
	present := false
	if link.Exists {
		if present, err = s.hasAddr(rec.Device, p); err != nil {
			return err
		}
	}
	switch {
	case !rec.Added:
		s.note("%s left on %s: it was there before add", p, rec.Device)
	case present:
		if err := s.host.DelAddr(rec.Device, p); err != nil {
			return err
		}
		s.note("%s removed from %s", p, rec.Device)
	}
	delete(s.st.VIPs, vip)
	return s.save()
}

func (s *session) releaseSysctl(name string) error {
	rec := s.st.Sysctls[name]
	current, err := s.host.Sysctl(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.note("%s is gone: nothing to restore", name)
	case err != nil:
		return err
	case current != rec.Previous:
		if err := s.host.SetSysctl(name, rec.Previous); err != nil {
			return err
		}
		changed := ""
		if current != rec.Value {
			changed = fmt.Sprintf(", though someone had changed it to %s", current)
		}
		s.note("%s = %s restored%s", name, rec.Previous, changed)
	}
	delete(s.st.Sysctls, name)
	return s.save()
}

func (s *session) releaseLink(dev string) error {
	rec := s.st.Links[dev]
	link, err := s.host.Link(dev)
	if err != nil {
		return err
	}
	switch {
	case !link.Exists:
	case rec.Created:
		if err := s.host.DelLink(dev); err != nil {
			return err
		}
		s.note("%s deleted", dev)
	case rec.SetUp && link.Up:
		if err := s.host.SetLinkUp(dev, false); err != nil {
			return err
		}
		s.note("%s set down", dev)
	}
	delete(s.st.Links, dev)
	return s.save()
}
