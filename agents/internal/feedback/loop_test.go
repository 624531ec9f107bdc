package feedback

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
	"fulcrum/agents/internal/ipvs"
)

// loadServer is a stand-in for fulcrum-loadd's JSON endpoint on a real
// socket: it answers with whatever load (or error) is set.
type loadServer struct {
	*httptest.Server
	mu     sync.Mutex
	milli  int64
	status int
}

func newLoadServer(t *testing.T, milli int64) *loadServer {
	t.Helper()
	return newLoadServerOn(t, "127.0.0.1", milli)
}

// newLoadServerOn listens on host (any 127.x address works on Linux), so
// that tests can tell real servers apart by address as the agent does.
func newLoadServerOn(t *testing.T, host string, milli int64) *loadServer {
	t.Helper()
	ls := &loadServer{milli: milli, status: http.StatusOK}
	ls.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/load" {
			http.NotFound(w, r)
			return
		}
		ls.mu.Lock()
		defer ls.mu.Unlock()
		w.WriteHeader(ls.status)
		if ls.status != http.StatusOK {
			fmt.Fprint(w, `{"error": "measuring"}`)
			return
		}
		fmt.Fprintf(w, `{"load_milli": %d, "load": %g, "source": "file"}`, ls.milli, float64(ls.milli)/1000)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	ls.Listener = l
	ls.Start()
	t.Cleanup(ls.Close)
	return ls
}

func (ls *loadServer) set(milli int64, status int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.milli, ls.status = milli, status
}

// target is where ls answers, as the compiler would describe member name.
func (ls *loadServer) target(name string) bundle.Feedback {
	ap := netip.MustParseAddrPort(ls.Listener.Addr().(*net.TCPAddr).String())
	return bundle.Feedback{Pool: "app", Member: name, Address: ap.Addr().String(), Port: int(ap.Port())}
}

func TestPollerSmoothsAndKeepsTheLastGoodLoad(t *testing.T) {
	ls := newLoadServer(t, 500)
	p := &Poller{Client: &http.Client{Timeout: time.Second}, Alpha: 0.5}
	target := ls.target("s1")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clockAt := func(d time.Duration) func() time.Time { return func() time.Time { return now.Add(d) } }

	p.Poll(context.Background(), []bundle.Feedback{target}, clockAt(0))
	if r, _ := p.Reading(target); r.Milli != 500 || r.Err != "" {
		t.Fatalf("first reading = %+v, want 500 as is", r)
	}
	ls.set(700, http.StatusOK)
	p.Poll(context.Background(), []bundle.Feedback{target}, clockAt(time.Second))
	if r, _ := p.Reading(target); r.Milli != 600 || !r.At.Equal(now.Add(time.Second)) {
		t.Fatalf("second reading = %+v, want 600 (half way) at +1s", r)
	}
	ls.set(0, http.StatusServiceUnavailable)
	p.Poll(context.Background(), []bundle.Feedback{target}, clockAt(2*time.Second))
	r, _ := p.Reading(target)
	if r.Milli != 600 || !r.At.Equal(now.Add(time.Second)) || !strings.Contains(r.Err, "HTTP 503: measuring") {
		t.Fatalf("after a 503: %+v, want the last load kept, its time unchanged and the error", r)
	}
	p.forget(nil)
	if _, ok := p.Reading(target); ok {
		t.Error("a target no longer listed is still remembered")
	}
}

// fakeIPVS is one kernel table.
type fakeIPVS struct {
	services []ipvs.Service
	dests    map[ipvs.ServiceID][]ipvs.Dest
	sets     []string
}

func (f *fakeIPVS) Services(context.Context) ([]ipvs.Service, error) { return f.services, nil }

func (f *fakeIPVS) Dests(_ context.Context, svc ipvs.Service) ([]ipvs.Dest, error) {
	return append([]ipvs.Dest(nil), f.dests[svc.ServiceID]...), nil
}

func (f *fakeIPVS) SetDestWeight(_ context.Context, svc ipvs.Service, d ipvs.Dest, w int32) error {
	f.sets = append(f.sets, fmt.Sprintf("%s %d", d.AddrPort(), w))
	for i, x := range f.dests[svc.ServiceID] {
		if x.AddrPort() == d.AddrPort() {
			f.dests[svc.ServiceID][i].Weight = w
		}
	}
	return nil
}

type fakeModule struct{ lines []string }

func (m *fakeModule) Write(line string) error {
	m.lines = append(m.lines, line)
	return nil
}

// fakeHAProxy is HAProxy's runtime API: the servers' figures, and the
// weights set ("backend/server weight").
type fakeHAProxy struct {
	stats map[string]haproxy.ServerStat
	sets  []string
}

func (f *fakeHAProxy) ServerStats(context.Context) (map[string]haproxy.ServerStat, error) {
	return f.stats, nil
}

func (f *fakeHAProxy) SetWeight(_ context.Context, server string, weight int) error {
	f.sets = append(f.sets, fmt.Sprintf("%s %d", server, weight))
	st := f.stats[server]
	st.Weight = weight
	f.stats[server] = st
	return nil
}

// l4Case is a dllc service of three real servers 127.0.0.1-3:80 whose
// loadd answer 500, 300 and 700 (the study's example), in a kernel
// scheduling it with scheduler; rs2's configured weight is 2, rs3 is
// drained by keepalived (weight 0).
func l4Case(t *testing.T, scheduler string) (*Loop, *fakeIPVS, *fakeModule, []*loadServer) {
	t.Helper()
	svc := bundle.IPVSService{Key: "tcp 10.0.0.10:80", Name: "web", Protocol: "tcp", Address: "10.0.0.10", Port: 80,
		Scheduler: "dllc", KeepalivedScheduler: "wlc"}
	id := ipvs.IDOf(svc)
	kernel := &fakeIPVS{services: []ipvs.Service{{ServiceID: id, Scheduler: scheduler}}, dests: map[ipvs.ServiceID][]ipvs.Dest{}}
	var loads []*loadServer
	for i, milli := range []int64{500, 300, 700} {
		addr := netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
		ls := newLoadServerOn(t, addr.String(), milli)
		loads = append(loads, ls)
		weight := []int{1, 2, 0}[i]
		svc.Feedback = append(svc.Feedback, bundle.DestFeedback{Feedback: ls.target(fmt.Sprintf("rs%d", i+1)), DestPort: 80, Weight: weight})
		kernel.dests[id] = append(kernel.dests[id], ipvs.Dest{Family: unix.AF_INET, Addr: addr, Port: 80, Weight: int32(weight), ActiveConns: uint32(i + 1)})
	}
	module := &fakeModule{}
	loop := &Loop{
		IPVS: kernel, Module: module, HAProxy: &fakeHAProxy{},
		Services: func() ([]bundle.IPVSService, error) { return []bundle.IPVSService{svc}, nil },
		Servers:  func() ([]bundle.Server, error) { return nil, nil },
		Poller:   &Poller{Client: &http.Client{Timeout: time.Second}, Alpha: 1},
		MaxAge:   3 * time.Second,
		Logger:   slog.New(slog.DiscardHandler),
	}
	return loop, kernel, module, loads
}

func TestLoopWritesLoadsIntoTheModule(t *testing.T) {
	loop, kernel, module, _ := l4Case(t, "dllc")
	loop.Step(context.Background())
	want := []string{"tcp 10.0.0.10:80 127.0.0.1:80 500", "tcp 10.0.0.10:80 127.0.0.2:80 300", "tcp 10.0.0.10:80 127.0.0.3:80 700"}
	if diff := cmp.Diff(want, module.lines); diff != "" {
		t.Errorf("module lines (-want +got):\n%s", diff)
	}
	if len(kernel.sets) != 0 {
		t.Errorf("weights changed with the module in force: %v", kernel.sets)
	}
	members := loop.Members()
	if len(members) != 3 || members[1].Feed != FeedModule || *members[1].LoadMilli != 300 || *members[1].Connections != 2 {
		t.Fatalf("members = %+v", members)
	}
}

func TestLoopRestoresConfiguredWeightsWhenTheModuleReturns(t *testing.T) {
	loop, kernel, _, _ := l4Case(t, "dllc")
	id := kernel.services[0].ServiceID
	kernel.dests[id][1].Weight = 154 // left over from the wlc fallback
	loop.Step(context.Background())
	if diff := cmp.Diff([]string{"127.0.0.2:80 2"}, kernel.sets); diff != "" {
		t.Errorf("weight changes (-want +got):\n%s", diff)
	}
}

func TestLoopFallsBackToWeightsWithoutTheModule(t *testing.T) {
	loop, kernel, module, loads := l4Case(t, "wlc")
	loop.Step(context.Background())
	if len(module.lines) != 0 {
		t.Errorf("module written while wlc is in force: %v", module.lines)
	}
	// 1 × 25600 / 500 = 51, 2 × 25600 / 300 = 171; rs3 is drained and stays 0.
	if diff := cmp.Diff([]string{"127.0.0.1:80 51", "127.0.0.2:80 171"}, kernel.sets); diff != "" {
		t.Errorf("weight changes (-want +got):\n%s", diff)
	}
	if m := loop.Members()[0]; m.Feed != "wlc weights" || *m.Weight != 51 {
		t.Errorf("member status = %+v, want feed wlc weights, weight 51", m)
	}

	// rs1's agent stops answering: once its load is too old it counts as the
	// mean of the others (300 and 700: 500), so its weight stays 51.
	kernel.sets = nil
	loads[0].set(0, http.StatusServiceUnavailable)
	loads[1].set(100, http.StatusOK)
	start := time.Now()
	loop.Now = func() time.Time { return start.Add(10 * time.Second) }
	loop.Step(context.Background())
	// Fresh: rs2 at 100 (2 × 25600 / 100 = 512) and rs3 at 700; rs1 counts
	// as their mean, 400: 1 × 25600 / 400 = 64.
	m := loop.Members()[0]
	if !strings.Contains(m.Message, "no fresh load: fulcrum-loadd: HTTP 503") {
		t.Errorf("rs1 message = %q", m.Message)
	}
	if diff := cmp.Diff([]string{"127.0.0.1:80 64", "127.0.0.2:80 512"}, kernel.sets); diff != "" {
		t.Errorf("weight changes after rs1 went silent (-want +got):\n%s", diff)
	}
}

func TestLoopReportsHAProxyMembers(t *testing.T) {
	ls := newLoadServer(t, 250)
	f := ls.target("big")
	loop := &Loop{
		HAProxy: &fakeHAProxy{stats: map[string]haproxy.ServerStat{"pool-app/big": {Current: 4, Weight: 102}}},
		Module:  &fakeModule{},
		Services: func() ([]bundle.IPVSService, error) {
			return nil, nil
		},
		Servers: func() ([]bundle.Server, error) {
			return []bundle.Server{{Backend: "pool-app", Server: "big", Weight: 256, Admin: bundle.Ready, Feedback: f}}, nil
		},
		Poller: &Poller{Client: &http.Client{Timeout: time.Second}, Alpha: 1},
		MaxAge: 3 * time.Second,
		Logger: slog.New(slog.DiscardHandler),
	}
	loop.Step(context.Background())
	got := loop.Members()
	conns, weight, milli := 4, 102, int64(250)
	want := []client.MemberStatus{{Pool: "app", Member: "big", Layer: "haproxy", LoadMilli: &milli, Connections: &conns, Weight: &weight, Feed: FeedAgent}}
	if diff := cmp.Diff(want, got, cmpIgnoreLoadAt); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

var cmpIgnoreLoadAt = cmpopts.IgnoreFields(client.MemberStatus{}, "LoadAt")

// A HAProxy server whose agent went silent gets the weight of the pool's
// average load: HAProxy alone would keep its last answer for ever.
func TestLoopGivesASilentHAProxyServerTheAverageWeight(t *testing.T) {
	a, b := newLoadServerOn(t, "127.0.0.1", 500), newLoadServerOn(t, "127.0.0.2", 300)
	fa, fb := a.target("a"), b.target("b")
	servers := []bundle.Server{
		{Backend: "pool-app", Server: "a", Weight: 256, Admin: bundle.Ready, Feedback: fa},
		{Backend: "pool-app", Server: "b", Weight: 256, Admin: bundle.Ready, Feedback: fb},
	}
	hap := &fakeHAProxy{stats: map[string]haproxy.ServerStat{
		"pool-app/a": {Weight: 51}, "pool-app/b": {Weight: 84},
	}}
	loop := &Loop{
		HAProxy: hap, Module: &fakeModule{},
		Services: func() ([]bundle.IPVSService, error) { return nil, nil },
		Servers:  func() ([]bundle.Server, error) { return servers, nil },
		Poller:   &Poller{Client: &http.Client{Timeout: time.Second}, Alpha: 1},
		MaxAge:   3 * time.Second,
		Logger:   slog.New(slog.DiscardHandler),
	}
	loop.Step(context.Background())
	if len(hap.sets) != 0 {
		t.Fatalf("weights set while every agent answers: %v", hap.sets)
	}
	b.set(0, http.StatusServiceUnavailable)
	start := time.Now()
	loop.Now = func() time.Time { return start.Add(10 * time.Second) }
	loop.Step(context.Background())
	// b counts as a's load, 500: 256 × 20 / 100 = 51.
	if diff := cmp.Diff([]string{"pool-app/b 51"}, hap.sets); diff != "" {
		t.Errorf("weights set (-want +got):\n%s", diff)
	}
	if m := loop.Members()[1]; *m.Weight != 51 || !strings.Contains(m.Message, "no fresh load") {
		t.Errorf("b's status = %+v", m)
	}
}
