package realserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Linux is the Host of the running kernel: sysctls through /proc/sys,
// addresses and links through rtnetlink, tunnel modules through modprobe.
// The zero value is ready to use.
type Linux struct {
	// ProcSys is the mount point of the sysctl tree; empty means /proc/sys.
	ProcSys string
	// Modprobe is the modprobe command; empty means "modprobe" on PATH.
	Modprobe string
}

// tunnelKinds maps the fallback tunnel devices to the module that creates
// them and the rtnetlink link that asks for one.
var tunnelKinds = map[string]struct {
	module string
	link   func(attrs netlink.LinkAttrs) netlink.Link
}{
	// Proto 0 accepts any inner protocol, like the fallback devices.
	Tunnel4: {"ipip", func(a netlink.LinkAttrs) netlink.Link { return &netlink.Iptun{LinkAttrs: a} }},
	Tunnel6: {"ip6_tunnel", func(a netlink.LinkAttrs) netlink.Link { return &netlink.Ip6tnl{LinkAttrs: a} }},
}

func (l Linux) sysctlPath(name string) string {
	root := l.ProcSys
	if root == "" {
		root = "/proc/sys"
	}
	// Device names with dots would need sysctl(8)'s "/" form; this package
	// only names all, lo and tunl0.
	return filepath.Join(root, strings.ReplaceAll(name, ".", "/"))
}

// Sysctl implements Host.
func (l Linux) Sysctl(name string) (string, error) {
	b, err := os.ReadFile(l.sysctlPath(name))
	if err != nil {
		return "", fmt.Errorf("sysctl %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// SetSysctl implements Host.
func (l Linux) SetSysctl(name, value string) error {
	f, err := os.OpenFile(l.sysctlPath(name), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("sysctl %s: %w", name, err)
	}
	_, err = f.WriteString(value + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", name, value, err)
	}
	return nil
}

// Addrs implements Host.
func (Linux) Addrs(dev string) ([]netip.Prefix, error) {
	link, err := netlink.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", dev, err)
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", dev, err)
	}
	prefixes := make([]netip.Prefix, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		bits, _ := a.Mask.Size()
		prefixes = append(prefixes, netip.PrefixFrom(ip.Unmap(), bits))
	}
	return prefixes, nil
}

// AddAddr implements Host.
func (Linux) AddAddr(dev string, p netip.Prefix) error {
	return changeAddr(dev, p, netlink.AddrAdd)
}

// DelAddr implements Host.
func (Linux) DelAddr(dev string, p netip.Prefix) error {
	return changeAddr(dev, p, netlink.AddrDel)
}

func changeAddr(dev string, p netip.Prefix, change func(netlink.Link, *netlink.Addr) error) error {
	link, err := netlink.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("device %s: %w", dev, err)
	}
	a := &netlink.Addr{IPNet: &net.IPNet{
		IP:   p.Addr().AsSlice(),
		Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen()),
	}}
	if p.Addr().Is6() {
		// A VIP is shared by design: duplicate address detection would
		// find the director and leave the address tentative forever.
		a.Flags = unix.IFA_F_NODAD
	}
	if err := change(link, a); err != nil {
		return fmt.Errorf("address %s on %s: %w", p, dev, err)
	}
	return nil
}

// Link implements Host.
func (Linux) Link(name string) (LinkStatus, error) {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return LinkStatus{}, nil
	}
	if err != nil {
		return LinkStatus{}, fmt.Errorf("device %s: %w", name, err)
	}
	return LinkStatus{Exists: true, Up: link.Attrs().Flags&net.FlagUp != 0}, nil
}

// SetLinkUp implements Host.
func (Linux) SetLinkUp(name string, up bool) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("device %s: %w", name, err)
	}
	set, state := netlink.LinkSetDown, "down"
	if up {
		set, state = netlink.LinkSetUp, "up"
	}
	if err := set(link); err != nil {
		return fmt.Errorf("set %s %s: %w", name, state, err)
	}
	return nil
}

// AddTunnel implements Host. Loading the module creates the fallback device
// in every network namespace (unless net.core.fb_tunnels_only_for_init_net
// forbids it); asking rtnetlink for a link of the module's kind loads it too
// when the kernel can (request_module), and otherwise, or when fallback
// devices are disabled here, creates an equivalent any-to-any device.
func (l Linux) AddTunnel(name string) (bool, error) {
	kind, ok := tunnelKinds[name]
	if !ok {
		return false, fmt.Errorf("%s is not a fallback tunnel device", name)
	}
	loaded := "modprobe " + kind.module + " succeeded but did not make it"
	if err := l.modprobe(kind.module); err != nil {
		loaded = err.Error()
	}
	if st, err := l.Link(name); err != nil || st.Exists {
		return false, err
	}
	err := netlink.LinkAdd(kind.link(netlink.LinkAttrs{Name: name}))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		// The request loaded the module, whose device took the name.
		return false, nil
	default:
		return false, fmt.Errorf("%s is missing and cannot be made (is the %s module available?): %s; creating it by netlink: %v",
			name, kind.module, loaded, err)
	}
}

// modprobe loads module. systemd units have /usr/sbin on PATH, but login
// shells of other users and some sudo setups do not.
func (l Linux) modprobe(module string) error {
	cmd := l.Modprobe
	if cmd == "" {
		cmd = "modprobe"
		if _, err := exec.LookPath(cmd); err != nil {
			cmd = "/usr/sbin/modprobe"
		}
	}
	out, err := exec.Command(cmd, module).CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return fmt.Errorf("%s %s: %w", cmd, module, err)
	}
	return nil
}

// DelLink implements Host.
func (Linux) DelLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("device %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// Identity implements Host.
func (l Linux) Identity() (Identity, error) {
	boot, err := l.Sysctl("kernel.random.boot_id")
	if err != nil {
		return Identity{}, err
	}
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return Identity{}, fmt.Errorf("network namespace: %w", err)
	}
	return Identity{BootID: boot, NetNS: ns}, nil
}
