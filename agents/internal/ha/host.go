package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Host is what the agent looks at and changes in the namespace keepalived
// runs in. Commands implements it; tests use fakes.
type Host interface {
	// Addresses returns the addresses on each interface, by interface
	// name, with their prefix length.
	Addresses(ctx context.Context) (map[string][]netip.Prefix, error)
	// DeleteAddress removes address p from interface dev.
	DeleteAddress(ctx context.Context, dev string, p netip.Prefix) error
	// LinkUp reports whether interface dev is up with a carrier, as
	// keepalived requires of the interfaces it tracks.
	LinkUp(ctx context.Context, dev string) (bool, error)
	// Ping reports whether addr answers one ping within a second, as the
	// compiler's witness script asks.
	Ping(ctx context.Context, addr string) bool
}

// commandTimeout bounds one ip or ping command.
const commandTimeout = 5 * time.Second

// Commands runs ip and ping through an exec prefix, so that they see the
// namespace keepalived runs in.
type Commands struct {
	// ExecPrefix is prepended to every command, e.g. ["ip", "netns",
	// "exec", "fl-lb"].
	ExecPrefix []string
	// IPBinary and PingBinary are the executables; empty means "ip" and
	// "/usr/bin/ping" (the witness script's).
	IPBinary, PingBinary string
}

// Addresses implements Host with "ip -json addr show".
func (c Commands) Addresses(ctx context.Context) (map[string][]netip.Prefix, error) {
	out, err := c.output(ctx, c.ip(), "-json", "addr", "show")
	if err != nil {
		return nil, err
	}
	return ParseAddresses(out)
}

// ParseAddresses reads the output of "ip -json addr show": each
// interface's addresses with their prefix lengths.
func ParseAddresses(out []byte) (map[string][]netip.Prefix, error) {
	var links []struct {
		IfName   string `json:"ifname"`
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return nil, fmt.Errorf("ip -json addr: %w", err)
	}
	addrs := map[string][]netip.Prefix{}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			p, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", a.Local, a.PrefixLen))
			if err != nil {
				return nil, fmt.Errorf("ip -json addr: %w", err)
			}
			addrs[l.IfName] = append(addrs[l.IfName], p)
		}
	}
	return addrs, nil
}

// DeleteAddress implements Host with "ip addr del".
func (c Commands) DeleteAddress(ctx context.Context, dev string, p netip.Prefix) error {
	_, err := c.output(ctx, c.ip(), "addr", "del", p.String(), "dev", dev)
	return err
}

// LinkUp implements Host with "ip -json link show dev": the link must be
// administratively up (UP) and have a carrier (LOWER_UP).
func (c Commands) LinkUp(ctx context.Context, dev string) (bool, error) {
	out, err := c.output(ctx, c.ip(), "-json", "link", "show", "dev", dev)
	if err != nil {
		return false, err
	}
	var links []struct {
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return false, fmt.Errorf("ip -json link show dev %s: unexpected output %q", dev, out)
	}
	return slices.Contains(links[0].Flags, "UP") && slices.Contains(links[0].Flags, "LOWER_UP"), nil
}

// Ping implements Host with the witness script's command.
func (c Commands) Ping(ctx context.Context, addr string) bool {
	bin := c.PingBinary
	if bin == "" {
		bin = "/usr/bin/ping"
	}
	_, err := c.output(ctx, bin, "-n", "-q", "-c", "1", "-W", "1", addr)
	return err == nil
}

func (c Commands) ip() string {
	if c.IPBinary == "" {
		return "ip"
	}
	return c.IPBinary
}

func (c Commands) output(ctx context.Context, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	argv = append(append([]string{}, c.ExecPrefix...), argv...)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(ee.Stderr)))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return out, nil
}
