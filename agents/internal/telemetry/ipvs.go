package telemetry

import (
	"context"
	"fmt"
	"net/netip"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/ipvs"
)

// IPVSTable lists the kernel's virtual services and real servers with their
// counters; *ipvs.Netlink implements it.
type IPVSTable interface {
	Services(ctx context.Context) ([]ipvs.Service, error)
	Dests(ctx context.Context, svc ipvs.Service) ([]ipvs.Dest, error)
}

// IPVS reads layer-4 figures from the kernel, named through the live
// ipvs.json as the DLLC feedback loop names them.
type IPVS struct {
	// Kernel is the IPVS table.
	Kernel IPVSTable
	// Services reads the live ipvs.json (none when absent).
	Services func() ([]bundle.IPVSService, error)
}

// Name implements Source.
func (v IPVS) Name() string { return "ipvs" }

// Read implements Source. The kernel is not asked when ipvs.json lists no
// service, so a node without layer-4 services needs no IPVS.
func (v IPVS) Read(ctx context.Context) ([]Reading, error) {
	wanted, err := v.Services()
	if err != nil || len(wanted) == 0 {
		return nil, err
	}
	list, err := v.Kernel.Services(ctx)
	if err != nil {
		return nil, err
	}
	kernel := make(map[ipvs.ServiceID]ipvs.Service, len(list))
	for _, s := range list {
		kernel[s.ServiceID] = s
	}
	var out []Reading
	for _, s := range wanted {
		svc, ok := kernel[ipvs.IDOf(s)]
		if !ok {
			continue // keepalived has not created it (yet): nothing counted
		}
		dests, err := v.Kernel.Dests(ctx, svc)
		if err != nil {
			return nil, err
		}
		out = append(out, IPVSReadings(s, svc, dests)...)
	}
	return out, nil
}

// IPVSReadings are the figures of one service of ipvs.json and of its
// members, from the kernel's service svc and its real servers dests. A
// connection is a request here: IPVS sees no more. Its gauge is the
// connections IPVS tracks (active and inactive).
//
// keepalived does the health checks: it removes a failed real server from
// the table, or with inhibit_on_failure keeps it at weight 0. So a member
// is down when absent, or at weight 0 with a configured weight above 0; a
// configured weight of 0 is a drain.
func IPVSReadings(s bundle.IPVSService, svc ipvs.Service, dests []ipvs.Dest) []Reading {
	present := make(map[netip.AddrPort]ipvs.Dest, len(dests))
	var conns int64
	for _, d := range dests {
		present[d.AddrPort()] = d
		conns += int64(d.ActiveConns) + int64(d.InactConns)
	}
	out := []Reading{{
		Key: "service " + s.Key, Service: s.Name, Connections: conns, Counters: statsCounters(svc.Stats),
	}}
	for _, m := range s.Members {
		d, ok := present[m.AddrPort()]
		r := Reading{Key: fmt.Sprintf("dest %s %s", s.Key, m.AddrPort()), Pool: m.Pool, Member: m.Member}
		health := destHealth(s, m, d, ok)
		r.Health = &health
		if ok {
			r.Connections = int64(d.ActiveConns) + int64(d.InactConns)
			r.Counters = statsCounters(d.Stats)
		}
		out = append(out, r)
	}
	return out
}

// destHealth is a member's health as keepalived left its real server.
func destHealth(s bundle.IPVSService, m bundle.IPVSMember, d ipvs.Dest, present bool) client.Health {
	switch {
	case m.Sorry && present:
		return client.Health{Status: client.HealthUp, Detail: "sorry server: in use while every other member is down"}
	case m.Sorry:
		return client.Health{Status: client.HealthUnchecked, Detail: "sorry server: used only when every other member is down"}
	case !present && s.HealthCheck == "":
		return client.Health{Status: client.HealthDown, Detail: "not in the kernel's IPVS table: keepalived has not added it"}
	case !present:
		return client.Health{Status: client.HealthDown, Detail: fmt.Sprintf(
			"keepalived's %s check failed: it removed the real server from the IPVS table", s.HealthCheck)}
	case m.Weight == 0:
		return client.Health{Status: client.HealthDrain, Detail: "drained: weight 0, no new connections"}
	case d.Weight == 0:
		return client.Health{Status: client.HealthDown, Detail: fmt.Sprintf(
			"keepalived's %s check failed: it set the real server's weight to 0 (inhibit on failure)", s.HealthCheck)}
	case s.HealthCheck == "":
		return client.Health{Status: client.HealthUnchecked}
	}
	return client.Health{Status: client.HealthUp}
}

func statsCounters(s ipvs.Stats) [numCounters]uint64 {
	return [numCounters]uint64{Requests: s.Conns, BytesIn: s.InBytes, BytesOut: s.OutBytes}
}
