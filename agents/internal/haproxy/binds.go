package haproxy

// What a configuration listens on, and whether the node lets HAProxy bind
// it, asked before a reload rather than by one. A reload whose new
// listener cannot bind (a port another program holds, an address the node
// does not have) fails, and on the way HAProxy pauses the old workers'
// listeners while it retries: every VIP of the node refused connections
// for about 2 s (issue 20). A listener the running configuration already
// has is held by HAProxy and not tried again.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
)

// Listener is the address of one bind line, as HAProxy binds it.
type Listener struct {
	// Address is host:port ("10.0.0.1:80", "[2001:db8::1]:443").
	Address string
	// Transparent binds whether or not the address is the node's (a
	// floating VIP on the backup), as HAProxy's "transparent" does.
	Transparent bool
}

// String is the listener as the bind check's helper takes it back.
func (l Listener) String() string {
	if l.Transparent {
		return l.Address + "/transparent"
	}
	return l.Address
}

// ParseListener reads what String wrote.
func ParseListener(s string) Listener {
	address, transparent := strings.CutSuffix(s, "/transparent")
	return Listener{Address: address, Transparent: transparent}
}

// Listeners lists the bind lines of a haproxy.cfg, in order, once each.
func Listeners(cfg string) []Listener {
	var out []Listener
	for _, line := range strings.Split(cfg, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "bind" {
			continue
		}
		l := Listener{Address: fields[1], Transparent: slices.Contains(fields[2:], "transparent")}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// NewListeners lists those of next's listeners that current does not have.
func NewListeners(next, current string) []Listener {
	held := Listeners(current)
	return slices.DeleteFunc(Listeners(next), func(l Listener) bool { return slices.Contains(held, l) })
}

// TryBinds binds each listener as HAProxy does (SO_REUSEADDR and
// SO_REUSEPORT, IP_TRANSPARENT when asked) and closes it at once. It
// returns one line per listener the node refuses, in the kernel's words.
func TryBinds(ctx context.Context, listeners []Listener) []string {
	var refused []string
	for _, l := range listeners {
		if err := tryBind(ctx, l); err != nil {
			refused = append(refused, fmt.Sprintf("bind %s: %v", l.Address, err))
		}
	}
	return refused
}

func tryBind(ctx context.Context, l Listener) error {
	host, _, err := net.SplitHostPort(l.Address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("%q is not an IP address", host)
	}
	network := "tcp4"
	if ip.To4() == nil {
		network = "tcp6"
	}
	var optErr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		err := c.Control(func(fd uintptr) {
			s := int(fd)
			optErr = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			if optErr == nil {
				optErr = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			}
			if optErr == nil && l.Transparent && network == "tcp4" {
				optErr = unix.SetsockoptInt(s, unix.SOL_IP, unix.IP_TRANSPARENT, 1)
			} else if optErr == nil && l.Transparent {
				optErr = unix.SetsockoptInt(s, unix.SOL_IPV6, unix.IPV6_TRANSPARENT, 1)
			}
		})
		if err != nil {
			return err
		}
		return optErr
	}}
	ln, err := lc.Listen(ctx, network, l.Address)
	if err != nil {
		if opErr := (*net.OpError)(nil); errors.As(err, &opErr) && opErr.Err != nil {
			return opErr.Err // "bind: address already in use", without Go's "listen tcp4 ..." prefix
		}
		return err
	}
	return ln.Close()
}

// BindCheckMain is the bind check's helper (fulcrum-agent check-binds
// LISTENER...), run in the node's network namespace: it prints one line per
// listener refused and returns 1 if any was, 0 if none.
func BindCheckMain(ctx context.Context, args []string, stdout io.Writer) int {
	listeners := make([]Listener, 0, len(args))
	for _, arg := range args {
		listeners = append(listeners, ParseListener(arg))
	}
	refused := TryBinds(ctx, listeners)
	for _, line := range refused {
		fmt.Fprintln(stdout, line)
	}
	if len(refused) > 0 {
		return 1
	}
	return 0
}

// checkBinds tries, on the node, the listeners of dir's configuration that
// the running HAProxy does not hold already.
func (m *Manager) checkBinds(ctx context.Context, dir string) error {
	next, err := os.ReadFile(filepath.Join(dir, bundle.MainFile))
	if err != nil {
		return err
	}
	var current []byte
	if m.Running(ctx) {
		current, _ = os.ReadFile(filepath.Join(m.ConfDir, bundle.MainFile))
	}
	fresh := NewListeners(string(next), string(current))
	if len(fresh) == 0 {
		return nil
	}
	var refused []string
	switch {
	case len(m.ExecPrefix) == 0:
		refused = TryBinds(ctx, fresh)
	case len(m.BindHelper) > 0:
		argv := append(append([]string{}, m.ExecPrefix...), m.BindHelper...)
		for _, l := range fresh {
			argv = append(argv, l.String())
		}
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
			refused = strings.Split(strings.TrimSpace(string(out)), "\n")
		} else if err != nil {
			return fmt.Errorf("bind check on the node: %w: %s", err, strings.TrimSpace(string(out)))
		}
	default:
		return nil // no way into the node's namespace: the reload decides
	}
	if len(refused) == 0 {
		return nil
	}
	return &CheckError{Output: strings.Join(refused, "\n") +
		"\n(tried on the node before reloading: nothing was reloaded, the running configuration keeps serving)"}
}
