// Package feedback closes the DLLC loop on a node: it reads the loads of
// the members of dynamic-least-load pools from fulcrum-loadd, and
//
//   - for an IPVS service scheduled by the ip_vs_dllc module, writes them
//     into the module (which picks the smallest connections × load /
//     weight itself) and keeps the weights keepalived configured;
//   - for an IPVS service whose kernel lacks the module (keepalived's wlc
//     stays in force), sets each real server's weight to its configured
//     weight scaled by 1 / load (dllc.IPVSWeight), so that wlc chooses as
//     DLLC would;
//   - for a HAProxy pool, only reads them (HAProxy asks the same program's
//     agent-check itself), except that a server whose load is unknown gets
//     the weight of the pool's average load, where HAProxy would keep the
//     last answer of a silent agent.
//
// A load older than MaxAge (or never read) is unknown: the module counts it
// as the service's average by its own age limit, and the wlc fallback does
// the same (dllc.Fill). The live figures of every such member go to the
// API with the node's status.
package feedback

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
	"fulcrum/agents/internal/dllc"
	"fulcrum/agents/internal/haproxy"
	"fulcrum/agents/internal/ipvs"
)

// The ways a member's load reaches its scheduler, as the status says.
const (
	FeedModule  = "ip_vs_dllc"
	FeedWeights = "wlc weights"
	FeedAgent   = "haproxy agent-check"
)

// IPVS is the kernel's IPVS table; *ipvs.Netlink implements it.
type IPVS interface {
	Services(ctx context.Context) ([]ipvs.Service, error)
	Dests(ctx context.Context, svc ipvs.Service) ([]ipvs.Dest, error)
	SetDestWeight(ctx context.Context, svc ipvs.Service, d ipvs.Dest, w int32) error
}

// Module takes one load line; *ModuleFile implements it.
type Module interface {
	Write(line string) error
}

// HAProxy reports the servers' live figures and sets a weight;
// *haproxy.Manager implements it.
type HAProxy interface {
	ServerStats(ctx context.Context) (map[string]haproxy.ServerStat, error)
	SetWeight(ctx context.Context, server string, weight int) error
}

// Loop is the feedback loop. Services and Servers read the live bundle's
// ipvs.json and servers.json (none when absent).
type Loop struct {
	IPVS     IPVS // nil: IPVS is not managed
	Module   Module
	HAProxy  HAProxy
	Services func() ([]bundle.IPVSService, error)
	Servers  func() ([]bundle.Server, error)
	Poller   *Poller
	// MaxAge is how old a load may be and still count.
	MaxAge time.Duration
	// Now tells the time; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger

	mu      sync.Mutex
	members []client.MemberStatus
	logged  map[string]string // what was last logged, by subject
}

// Run steps every interval until ctx ends.
func (l *Loop) Run(ctx context.Context, interval time.Duration) {
	for {
		l.Step(ctx)
		if clock.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// Members returns the figures of the latest Step.
func (l *Loop) Members() []client.MemberStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.members)
}

// Step polls the loads and feeds them to the schedulers once.
func (l *Loop) Step(ctx context.Context) {
	services, err := l.Services()
	l.note("ipvs.json", err)
	servers, err := l.Servers()
	l.note("servers.json", err)
	var targets []bundle.Feedback
	for _, s := range services {
		for _, f := range s.Feedback {
			targets = append(targets, f.Feedback)
		}
	}
	for _, s := range servers {
		if s.Feedback != (bundle.Feedback{}) {
			targets = append(targets, s.Feedback)
		}
	}
	l.Poller.forget(targets)
	var members []client.MemberStatus
	if len(targets) > 0 {
		l.Poller.Poll(ctx, targets, l.now)
		members = append(l.feedIPVS(ctx, services), l.haproxyMembers(ctx, servers)...)
	}
	l.mu.Lock()
	l.members = members
	l.mu.Unlock()
}

// load is one member's load as the rule uses it now.
type load struct {
	reading Reading
	known   bool // read, and fresh
}

func (l *Loop) loadOf(f bundle.Feedback) load {
	r, ok := l.Poller.Reading(f)
	return load{reading: r, known: ok && !r.At.IsZero() && l.now().Sub(r.At) <= l.MaxAge}
}

// feedIPVS feeds every dllc service of ipvs.json and returns its members.
func (l *Loop) feedIPVS(ctx context.Context, services []bundle.IPVSService) []client.MemberStatus {
	var members []client.MemberStatus
	var kernel map[ipvs.ServiceID]ipvs.Service
	var kernelErr error
	for _, s := range services {
		if len(s.Feedback) == 0 {
			continue
		}
		if kernel == nil && kernelErr == nil {
			kernel, kernelErr = l.kernelServices(ctx)
			l.note("ipvs", kernelErr)
		}
		svc, ok := kernel[ipvs.IDOf(s)]
		var dests []ipvs.Dest
		var problem error
		switch {
		case kernelErr != nil:
			problem = kernelErr
		case !ok:
			problem = fmt.Errorf("the kernel has no service %s (yet)", s.Key)
		default:
			dests, problem = l.IPVS.Dests(ctx, svc)
		}
		members = append(members, l.feedService(ctx, s, svc, dests, problem)...)
	}
	return members
}

func (l *Loop) kernelServices(ctx context.Context) (map[ipvs.ServiceID]ipvs.Service, error) {
	if l.IPVS == nil {
		return nil, fmt.Errorf("IPVS is not managed on this node (no --keepalived)")
	}
	list, err := l.IPVS.Services(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[ipvs.ServiceID]ipvs.Service, len(list))
	for _, s := range list {
		byID[s.ServiceID] = s
	}
	return byID, nil
}

// feedService writes the loads of one service into the module, or sets its
// fallback weights, and returns the members' figures.
func (l *Loop) feedService(ctx context.Context, s bundle.IPVSService, svc ipvs.Service, dests []ipvs.Dest, problem error) []client.MemberStatus {
	byAddr := map[netip.AddrPort]ipvs.Dest{}
	for _, d := range dests {
		byAddr[d.AddrPort()] = d
	}
	targets := make([]bundle.Feedback, len(s.Feedback))
	for i, f := range s.Feedback {
		targets[i] = f.Feedback
	}
	loads, filled := l.loadsOf(targets)
	feed := FeedModule
	if svc.Scheduler != "dllc" {
		feed = svc.Scheduler + " weights"
	}
	members := make([]client.MemberStatus, 0, len(s.Feedback))
	for i, f := range s.Feedback {
		m := memberStatus(f.Feedback, "ipvs", loads[i])
		addr, _ := netip.ParseAddr(f.Address)
		d, present := byAddr[netip.AddrPortFrom(addr, uint16(f.DestPort))]
		switch {
		case problem != nil:
			m.Message = problem.Error()
		case !present:
			m.Message = "not in the kernel's table (disabled, failed its health check, or not added yet)"
		default:
			m.Feed = feed
			d.Weight, m.Message = l.feedDest(ctx, s, svc, d, f, loads[i], filled[i])
			conns, weight := int(d.ActiveConns+d.InactConns), int(d.Weight)
			m.Connections, m.Weight = &conns, &weight
		}
		members = append(members, m)
	}
	return members
}

// feedDest feeds one real server and returns its weight in force and what
// went wrong, if anything.
func (l *Loop) feedDest(ctx context.Context, s bundle.IPVSService, svc ipvs.Service, d ipvs.Dest, f bundle.DestFeedback, ld load, filled uint32) (int32, string) {
	want := int32(f.Weight)
	if svc.Scheduler == "dllc" {
		if ld.known {
			line := moduleLine(s.Protocol, s.Address, s.Port, s.FWMark, d.AddrPort(), uint32(max(0, min(ld.reading.Milli, 1<<31))))
			if err := l.Module.Write(line); err != nil {
				l.note("module "+s.Key, fmt.Errorf("write %q: %w", line, err))
				return d.Weight, fmt.Sprintf("the ip_vs_dllc module refused the load: %v", err)
			}
		}
	} else {
		want = int32(dllc.IPVSWeight(f.Weight, int64(filled)))
	}
	// Weight 0 is keepalived's (drained, quiesced): never lift it.
	if d.Weight > 0 && f.Weight > 0 && d.Weight != want {
		if err := l.IPVS.SetDestWeight(ctx, svc, d, want); err != nil {
			l.note("weight "+s.Key, err)
			return d.Weight, err.Error()
		}
		d.Weight = want
	}
	if !ld.known {
		return d.Weight, "no fresh load: " + staleReason(ld.reading)
	}
	return d.Weight, ""
}

// loadsOf returns what is known of each target's load, and the load the
// rule uses for each (an unknown one counting as the mean of the known).
func (l *Loop) loadsOf(targets []bundle.Feedback) ([]load, []uint32) {
	loads := make([]load, len(targets))
	milli := make([]int64, len(targets))
	known := make([]bool, len(targets))
	for i, t := range targets {
		loads[i] = l.loadOf(t)
		milli[i], known[i] = loads[i].reading.Milli, loads[i].known
	}
	return loads, dllc.Fill(milli, known)
}

// haproxyMembers returns the figures of the servers of DLLC pools, and
// gives a server whose load is unknown the weight of the pool's average
// load: HAProxy itself would keep the last answer of a silent agent.
func (l *Loop) haproxyMembers(ctx context.Context, servers []bundle.Server) []client.MemberStatus {
	byPool := map[string][]bundle.Server{}
	var pools []string
	for _, s := range servers {
		if s.Feedback == (bundle.Feedback{}) {
			continue
		}
		if byPool[s.Feedback.Pool] == nil {
			pools = append(pools, s.Feedback.Pool)
		}
		byPool[s.Feedback.Pool] = append(byPool[s.Feedback.Pool], s)
	}
	if len(pools) == 0 {
		return nil
	}
	stats, err := l.HAProxy.ServerStats(ctx)
	l.note("haproxy stats", err)
	var members []client.MemberStatus
	for _, pool := range pools {
		members = append(members, l.haproxyPool(ctx, byPool[pool], stats, err)...)
	}
	return members
}

func (l *Loop) haproxyPool(ctx context.Context, servers []bundle.Server, stats map[string]haproxy.ServerStat, statsErr error) []client.MemberStatus {
	targets := make([]bundle.Feedback, len(servers))
	for i, s := range servers {
		targets[i] = s.Feedback
	}
	loads, filled := l.loadsOf(targets)
	members := make([]client.MemberStatus, 0, len(servers))
	for i, s := range servers {
		m := memberStatus(s.Feedback, "haproxy", loads[i])
		m.Feed = FeedAgent
		st, ok := stats[s.Name()]
		switch {
		case !ok && statsErr != nil:
			m.Message = "cannot read HAProxy's figures: " + statsErr.Error()
		case !ok:
			m.Message = "HAProxy has no such server (yet)"
		default:
			if !loads[i].known && s.Weight > 0 && s.Admin == bundle.Ready && st.Weight > 0 {
				// What fulcrum-loadd would answer for the average load, as
				// HAProxy applies a percentage (truncated, at least 1).
				want := max(1, s.Weight*dllc.AgentPercent(int64(filled[i]))/100)
				if want != st.Weight {
					if err := l.HAProxy.SetWeight(ctx, s.Name(), want); err != nil {
						l.note("weight "+s.Name(), err)
					} else {
						st.Weight = want
					}
				}
			}
			conns, weight := st.Current, st.Weight
			m.Connections, m.Weight = &conns, &weight
		}
		members = append(members, m)
	}
	return members
}

func memberStatus(f bundle.Feedback, layer string, ld load) client.MemberStatus {
	m := client.MemberStatus{Pool: f.Pool, Member: f.Member, Layer: layer}
	if !ld.reading.At.IsZero() {
		milli, at := ld.reading.Milli, ld.reading.At.UTC()
		m.LoadMilli, m.LoadAt = &milli, &at
	}
	if !ld.known {
		m.Message = "no fresh load: " + staleReason(ld.reading)
	}
	return m
}

func staleReason(r Reading) string {
	switch {
	case r.Err != "":
		return "fulcrum-loadd: " + r.Err
	case r.At.IsZero():
		return "fulcrum-loadd has not answered yet"
	}
	return "the last answer is too old"
}

// note logs err once per subject until it changes, and once when it clears.
func (l *Loop) note(subject string, err error) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logged[subject] == text {
		return
	}
	if l.logged == nil {
		l.logged = map[string]string{}
	}
	l.logged[subject] = text
	logger := l.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if err != nil {
		logger.Warn("dllc feedback: "+subject, "err", err)
	} else {
		logger.Info("dllc feedback: " + subject + " works again")
	}
}

func (l *Loop) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
