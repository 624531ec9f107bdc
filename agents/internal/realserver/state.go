package realserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
)

// DefaultStateFile is where the state lives unless told otherwise. /run is
// emptied at boot, like the kernel state it describes.
const DefaultStateFile = "/run/fulcrum-realserver/state.json"

// State is the content of the state file: every change Manager made to the
// host and what it replaced.
//
//	{"boot_id": "…", "netns": "net:[4026531840]",
//	 "vips":    {"192.0.2.10": {"mode": "dr", "device": "lo", "added": true}},
//	 "sysctls": {"net.ipv4.conf.all.arp_ignore": {"previous": "0", "value": "1"}},
//	 "links":   {"lo": {"created": false, "set_up": false}}}
//
// Acquisitions are recorded before they are made and releases forgotten
// after they are undone, so an interrupted run leaves a state that over- rather
// than under-states what was changed: the next add completes it, the next
// remove undoes it.
type State struct {
	Identity
	// VIPs are the configured VIPs.
	VIPs map[netip.Addr]VIPState `json:"vips,omitempty"`
	// Sysctls are the sysctls set for them, by name.
	Sysctls map[string]SysctlState `json:"sysctls,omitempty"`
	// Links are the devices that hold them, by name.
	Links map[string]LinkState `json:"links,omitempty"`
}

// VIPState is one configured VIP.
type VIPState struct {
	// Mode is the forwarding method it was added for.
	Mode Mode `json:"mode"`
	// Device holds the address (VIP/32 or VIP/128).
	Device string `json:"device"`
	// Added is false when the address was already there: it is then not
	// this program's to remove.
	Added bool `json:"added"`
}

// SysctlState is one sysctl this program set.
type SysctlState struct {
	// Previous is the value it had before, restored when no VIP needs it.
	Previous string `json:"previous"`
	// Value is the value it was set to.
	Value string `json:"value"`
}

// LinkState is one device that holds VIPs.
type LinkState struct {
	// Created: this program created the device and deletes it after the
	// last VIP on it goes.
	Created bool `json:"created"`
	// SetUp: the device was down and this program set it up; it is set down
	// again after the last VIP on it goes.
	SetUp bool `json:"set_up"`
}

// empty reports whether nothing is recorded.
func (s *State) empty() bool {
	return len(s.VIPs) == 0 && len(s.Sysctls) == 0 && len(s.Links) == 0
}

// init makes the maps writable.
func (s *State) init() {
	if s.VIPs == nil {
		s.VIPs = map[netip.Addr]VIPState{}
	}
	if s.Sysctls == nil {
		s.Sysctls = map[string]SysctlState{}
	}
	if s.Links == nil {
		s.Links = map[string]LinkState{}
	}
}

// Store is the state file. Load takes an exclusive lock (on a ".lock" file
// beside it) that Close releases, so two invocations never interleave.
type Store struct {
	// Path is the state file; its directory is created if needed.
	Path string
	lock *os.File
}

// Load locks the store and reads the state; a missing file is the empty
// State.
func (s *Store) Load() (*State, error) {
	if err := s.acquire(); err != nil {
		return nil, err
	}
	return s.Read()
}

// Read reads the state without locking: Save replaces the file in one
// rename, so a reader sees the old state or the new one.
func (s *Store) Read() (*State, error) {
	st := &State{}
	b, err := os.ReadFile(s.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, st); err != nil {
			return nil, fmt.Errorf("state file %s: %w (move it away if the changes it lists are gone)", s.Path, err)
		}
	}
	st.init()
	return st, nil
}

func (s *Store) acquire() error {
	if s.lock != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	f, err := os.OpenFile(s.Path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return fmt.Errorf("state lock %s: %w", f.Name(), err)
	}
	s.lock = f
	return nil
}

// Save durably replaces the state file (temporary file, fsync, rename,
// fsync of the directory); an empty state removes it.
func (s *Store) Save(st *State) error {
	if st.empty() {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syncDir(filepath.Dir(s.Path))
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".state-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.Path)
	}
	if err != nil {
		return fmt.Errorf("state file %s: %w", s.Path, err)
	}
	return syncDir(filepath.Dir(s.Path))
}

// Close releases the lock.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
