package telemetry

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/ipvs"
)

// fakeKernel is an IPVS table.
type fakeKernel struct {
	services []ipvs.Service
	dests    map[ipvs.ServiceID][]ipvs.Dest
	err      error
	calls    int
}

func (f *fakeKernel) Services(context.Context) ([]ipvs.Service, error) {
	f.calls++
	return f.services, f.err
}

func (f *fakeKernel) Dests(_ context.Context, svc ipvs.Service) ([]ipvs.Dest, error) {
	return f.dests[svc.ServiceID], nil
}

func dest(addr string, port uint16, weight int32, active, inactive uint32, stats ipvs.Stats) ipvs.Dest {
	return ipvs.Dest{Family: unix.AF_INET, Addr: netip.MustParseAddr(addr), Port: port, Weight: weight,
		ActiveConns: active, InactConns: inactive, Stats: stats}
}

var (
	webService = bundle.IPVSService{
		Key: "tcp 10.0.0.10:80", Name: "web", Protocol: "tcp", Address: "10.0.0.10", Port: 80, Scheduler: "wlc",
		KeepalivedScheduler: "wlc", HealthCheck: "http",
		Members: []bundle.IPVSMember{
			{Pool: "app", Member: "up", Address: "10.0.1.1", Port: 8080, Weight: 2},
			{Pool: "app", Member: "removed", Address: "10.0.1.2", Port: 8080, Weight: 1},
			{Pool: "app", Member: "inhibited", Address: "10.0.1.3", Port: 8080, Weight: 1},
			{Pool: "app", Member: "drained", Address: "10.0.1.4", Port: 8080, Weight: 0},
			{Pool: "app", Member: "sorry", Address: "10.0.1.9", Port: 8080, Weight: 1, Sorry: true},
		},
	}
	markService = bundle.IPVSService{
		Key: "fwmark 7", Name: "range", Protocol: "udp", FWMark: 7, Scheduler: "rr", KeepalivedScheduler: "rr",
		Members: []bundle.IPVSMember{{Pool: "dns", Member: "ns1", Address: "10.0.2.1", Port: 0, Weight: 1}},
	}
	webID  = ipvs.IDOf(webService)
	markID = ipvs.IDOf(markService)
)

func TestIPVSReadings(t *testing.T) {
	svc := ipvs.Service{ServiceID: webID, Scheduler: "wlc", Stats: ipvs.Stats{Conns: 40, InBytes: 4000, OutBytes: 90000}}
	dests := []ipvs.Dest{
		dest("10.0.1.1", 8080, 2, 3, 5, ipvs.Stats{Conns: 30, InBytes: 3000, OutBytes: 70000}),
		dest("10.0.1.3", 8080, 0, 0, 1, ipvs.Stats{Conns: 10, InBytes: 1000, OutBytes: 20000}),
		dest("10.0.1.4", 8080, 0, 1, 0, ipvs.Stats{}),
		dest("10.0.1.7", 8080, 1, 0, 0, ipvs.Stats{Conns: 99}), // not ours: not reported
	}
	want := []Reading{
		{Key: "service tcp 10.0.0.10:80", Service: "web", Connections: 10, Counters: [numCounters]uint64{Requests: 40, BytesIn: 4000, BytesOut: 90000}},
		{Key: "dest tcp 10.0.0.10:80 10.0.1.1:8080", Pool: "app", Member: "up", Connections: 8,
			Counters: [numCounters]uint64{Requests: 30, BytesIn: 3000, BytesOut: 70000}, Health: &client.Health{Status: "up"}},
		{Key: "dest tcp 10.0.0.10:80 10.0.1.2:8080", Pool: "app", Member: "removed", Health: &client.Health{
			Status: "down", Detail: "keepalived's http check failed: it removed the real server from the IPVS table"}},
		{Key: "dest tcp 10.0.0.10:80 10.0.1.3:8080", Pool: "app", Member: "inhibited", Connections: 1,
			Counters: [numCounters]uint64{Requests: 10, BytesIn: 1000, BytesOut: 20000}, Health: &client.Health{
				Status: "down", Detail: "keepalived's http check failed: it set the real server's weight to 0 (inhibit on failure)"}},
		{Key: "dest tcp 10.0.0.10:80 10.0.1.4:8080", Pool: "app", Member: "drained", Connections: 1,
			Health: &client.Health{Status: "drain", Detail: "drained: weight 0, no new connections"}},
		{Key: "dest tcp 10.0.0.10:80 10.0.1.9:8080", Pool: "app", Member: "sorry",
			Health: &client.Health{Status: "unchecked", Detail: "sorry server: used only when every other member is down"}},
	}
	if diff := cmp.Diff(want, IPVSReadings(webService, svc, dests)); diff != "" {
		t.Errorf("readings mismatch (-want +got):\n%s", diff)
	}
}

func TestIPVSReadingsWithoutCheckAndMarkService(t *testing.T) {
	// A mark service's real servers have port 0; a pool without a check
	// is unchecked while present, down when keepalived has not added it.
	svc := ipvs.Service{ServiceID: markID, Stats: ipvs.Stats{Conns: 5}}
	got := IPVSReadings(markService, svc, []ipvs.Dest{dest("10.0.2.1", 0, 1, 0, 2, ipvs.Stats{Conns: 5, InBytes: 50})})
	if len(got) != 2 || *got[1].Health != (client.Health{Status: "unchecked"}) || got[1].Counters[BytesIn] != 50 || got[1].Connections != 2 {
		t.Errorf("present mark member: %+v", got)
	}
	got = IPVSReadings(markService, svc, nil)
	if h := *got[1].Health; h.Status != "down" || h.Detail != "not in the kernel's IPVS table: keepalived has not added it" {
		t.Errorf("absent unchecked member: %+v", h)
	}
}

// The IPVS source names the kernel's figures through ipvs.json, counts the
// interval's connections, and takes a re-added real server's counters
// from 0.
func TestIPVSSourceThroughTheCollector(t *testing.T) {
	kernel := &fakeKernel{
		services: []ipvs.Service{{ServiceID: webID, Stats: ipvs.Stats{Conns: 40}}, {ServiceID: markID}},
		dests:    map[ipvs.ServiceID][]ipvs.Dest{webID: {dest("10.0.1.1", 8080, 2, 1, 0, ipvs.Stats{Conns: 30})}},
	}
	wanted := []bundle.IPVSService{webService}
	c := &Collector{Sources: []Source{IPVS{Kernel: kernel, Services: func() ([]bundle.IPVSService, error) { return wanted, nil }}}}
	step := func() (int64, int64, client.Health) {
		t.Helper()
		services, members, err := c.Collect(context.Background())
		if err != nil || len(services) != 1 || len(members) != 5 {
			t.Fatalf("collect: %v, %d services, %d members", err, len(services), len(members))
		}
		return services[0].Requests, members[0].Requests, members[0].Health
	}
	step() // primes
	kernel.services[0].Stats.Conns = 52
	kernel.dests[webID][0].Stats.Conns = 37
	if svc, up, _ := step(); svc != 12 || up != 7 {
		t.Errorf("service counted %d, member %d; want 12 and 7", svc, up)
	}
	kernel.dests[webID] = nil // its check failed: removed
	if _, _, h := step(); h.Status != "down" {
		t.Errorf("removed member: %+v, want down", h)
	}
	kernel.dests[webID] = []ipvs.Dest{dest("10.0.1.1", 8080, 2, 0, 0, ipvs.Stats{Conns: 4})} // re-added, counting from 0
	if _, up, h := step(); up != 4 || h.Status != "up" {
		t.Errorf("re-added member counted %d (%s), want 4, up", up, h.Status)
	}

	wanted = nil // no layer-4 service: the kernel is not asked
	calls := kernel.calls
	if services, members, err := c.Collect(context.Background()); err != nil || len(services)+len(members) != 0 || kernel.calls != calls {
		t.Errorf("without ipvs.json services: %v, %v, %v; kernel asked %d times", services, members, err, kernel.calls-calls)
	}
	wanted, kernel.err = []bundle.IPVSService{webService}, errors.New("the kernel has no IPVS")
	if _, _, err := c.Collect(context.Background()); err == nil {
		t.Error("a kernel error must be returned")
	}
}
