// Package status tells the API what the node looks like, apart from apply
// outcomes: the networks of the namespace the daemons run in, the IPVS
// scheduler in force for each layer-4 service, the live load, connections
// and weight of every member of a dynamic-least-load pool, and the node's
// VRRP state in each of its HA groups. The Reporter sends it at start,
// whenever it changes, and at least every minute.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// Defaults for Reporter.
const (
	// DefaultPoll is how often the status is gathered and compared.
	DefaultPoll = 5 * time.Second
	// DefaultRefresh is how often an unchanged status is sent again.
	DefaultRefresh = 60 * time.Second
)

// Networks lists the node's networks; IPAddr implements it.
type Networks interface {
	// Networks returns every global address with its prefix length, e.g.
	// "10.0.0.1/24".
	Networks(ctx context.Context) ([]string, error)
}

// IPAddr reads the networks with "ip -json addr show", run through an exec
// prefix so that it sees the daemons' namespace.
type IPAddr struct {
	// Binary is the ip executable; empty means "ip".
	Binary string
	// ExecPrefix is prepended to the command, e.g. ["ip", "netns", "exec",
	// "fl-lb"].
	ExecPrefix []string
}

// Networks implements Networks.
func (i IPAddr) Networks(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	bin := i.Binary
	if bin == "" {
		bin = "ip"
	}
	argv := append(append([]string{}, i.ExecPrefix...), bin, "-json", "addr", "show")
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return ParseIPAddr(out)
}

// ParseIPAddr extracts the global-scope addresses from the output of
// "ip -json addr show", as "address/prefixlen", sorted, each once.
func ParseIPAddr(out []byte) ([]string, error) {
	var links []struct {
		AddrInfo []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
			Scope     string `json:"scope"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return nil, fmt.Errorf("ip -json addr: %w", err)
	}
	var prefixes []netip.Prefix
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if a.Scope != "global" {
				continue
			}
			p, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", a.Local, a.PrefixLen))
			if err != nil {
				return nil, fmt.Errorf("ip -json addr: %w", err)
			}
			prefixes = append(prefixes, p)
		}
	}
	slices.SortFunc(prefixes, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	networks := []string{}
	for _, p := range slices.Compact(prefixes) {
		networks = append(networks, p.String())
	}
	return networks, nil
}

// Sender sends a status; client.Client implements it.
type Sender interface {
	// Status sends one status.
	Status(ctx context.Context, s client.NodeStatus) error
}

// Reporter gathers the node's status and sends it when it changed, when
// the previous send failed, or when Refresh has passed since the API last
// took it. Failures are logged (once per distinct error) and retried at
// the next poll; they never stop the agent.
type Reporter struct {
	// Sender talks to the API.
	Sender Sender
	// Networks lists the node's networks.
	Networks Networks
	// IPVS returns the scheduler statuses; nil means none.
	IPVS func() []client.IPVSStatus
	// Members returns the live figures of DLLC pool members; nil means
	// none.
	Members func() []client.MemberStatus
	// VRRP returns the node's VRRP state in each HA group; nil means none.
	VRRP func() []client.VRRPStatus
	// Management returns the appliance's state for the management VIP; nil
	// means none (ManagementState reads fulcrum-management's file).
	Management func() string
	// Poll and Refresh; zero means DefaultPoll and DefaultRefresh.
	Poll, Refresh time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Sleep waits d or until ctx ends, Now tells the time; nil means the
	// real ones. Tests replace them.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time

	sent     *client.NodeStatus // what the API last took
	sentAt   time.Time
	lastFail string // the failure last logged
}

// Run sends the status at once, then polls until ctx ends.
func (r *Reporter) Run(ctx context.Context) {
	for {
		_ = r.Step(ctx)
		if r.sleep(ctx, orDefault(r.Poll, DefaultPoll)) != nil {
			return
		}
	}
}

// Step gathers the status and sends it if needed. It returns why it could
// not, if it could not.
func (r *Reporter) Step(ctx context.Context) error {
	err := r.step(ctx)
	r.note(err)
	return err
}

func (r *Reporter) step(ctx context.Context) error {
	networks, err := r.Networks.Networks(ctx)
	if err != nil {
		return fmt.Errorf("read networks: %w", err)
	}
	s := client.NodeStatus{
		Networks: networks, IPVS: []client.IPVSStatus{}, Members: []client.MemberStatus{}, VRRP: []client.VRRPStatus{},
	}
	if r.IPVS != nil {
		s.IPVS = append(s.IPVS, r.IPVS()...)
	}
	if r.Members != nil {
		s.Members = append(s.Members, r.Members()...)
	}
	if r.VRRP != nil {
		s.VRRP = append(s.VRRP, r.VRRP()...)
	}
	if r.Management != nil {
		s.Management = r.Management()
	}
	now := r.now()
	if r.sent != nil && sameStatus(*r.sent, s) && now.Sub(r.sentAt) < orDefault(r.Refresh, DefaultRefresh) {
		return nil
	}
	if err := r.Sender.Status(ctx, s); err != nil {
		return fmt.Errorf("send status: %w", err)
	}
	r.sent, r.sentAt = &s, now
	r.logger().Debug("status sent", "networks", s.Networks, "ipvs", len(s.IPVS), "vrrp", len(s.VRRP))
	return nil
}

// note logs a failure when it differs from the previous one, and once when
// failures stop.
func (r *Reporter) note(err error) {
	switch {
	case err != nil && err.Error() != r.lastFail:
		r.logger().Warn("status: not sent; retrying at the next poll", "err", err)
		r.lastFail = err.Error()
	case err == nil && r.lastFail != "":
		r.logger().Info("status: sent again")
		r.lastFail = ""
	}
}

// ManagementState reads fulcrum-management's state file at each status and
// names it as the API names VRRP states: master (this appliance holds the
// management VIP), backup, fault or stopped; "" when the file is missing (no
// management VIP, or its keepalived has not started) or holds anything else.
func ManagementState(path string) func() string {
	names := map[string]string{"MASTER": "master", "BACKUP": "backup", "FAULT": "fault", "STOP": "stopped"}
	return func() string {
		data, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		return names[strings.TrimSpace(string(data))]
	}
}

func sameStatus(a, b client.NodeStatus) bool {
	return reflect.DeepEqual(a, b)
}

func (r *Reporter) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	return clock.Sleep(ctx, d)
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reporter) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
