package realserver

import "net/netip"

// Host is everything Manager touches on the machine, in the network
// namespace of the calling process. Linux is the real one; tests use a fake.
type Host interface {
	// Sysctl reads a sysctl named as in sysctl(8), e.g.
	// "net.ipv4.conf.all.arp_ignore", without the trailing newline. An
	// error wrapping fs.ErrNotExist means there is no such sysctl (yet):
	// per-device ones exist only while the device does.
	Sysctl(name string) (string, error)
	// SetSysctl writes one.
	SetSysctl(name, value string) error

	// Addrs lists the addresses on device dev.
	Addrs(dev string) ([]netip.Prefix, error)
	// AddAddr adds p to dev (IPv6 without duplicate address detection).
	AddAddr(dev string, p netip.Prefix) error
	// DelAddr removes p from dev.
	DelAddr(dev string, p netip.Prefix) error

	// Link reports whether device name exists and is administratively up.
	Link(name string) (LinkStatus, error)
	// SetLinkUp sets device name up or down.
	SetLinkUp(name string, up bool) error
	// AddTunnel makes the fallback tunnel device name (Tunnel4 or Tunnel6)
	// exist: the kernel creates it when the tunnel module loads. created
	// reports that the device is not the module's but was made by this
	// call, so it is this program's to delete.
	AddTunnel(name string) (created bool, err error)
	// DelLink deletes device name.
	DelLink(name string) error

	// Identity tells which boot and network namespace the host state
	// belongs to.
	Identity() (Identity, error)
}

// LinkStatus is the state of one network device.
type LinkStatus struct {
	// Exists is false when there is no such device.
	Exists bool `json:"exists"`
	// Up is the administrative state (IFF_UP).
	Up bool `json:"up"`
}

// Identity names the kernel state a state file describes. Addresses,
// devices and sysctls live in one network namespace and vanish at reboot,
// so a state file written under another identity is not about this host.
type Identity struct {
	// BootID is /proc/sys/kernel/random/boot_id.
	BootID string `json:"boot_id"`
	// NetNS is the network namespace, as the link /proc/self/ns/net reads
	// ("net:[4026531840]").
	NetNS string `json:"netns"`
}
