package ipvs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
)

// fakeKernel is an IPVS table in memory whose kernel knows the schedulers
// in known.
type fakeKernel struct {
	services map[ServiceID]Service
	known    map[string]bool
	listErr  error
	sets     []string // "<id> <sched>" per SetScheduler call
}

func newFakeKernel(known []string, services ...Service) *fakeKernel {
	k := &fakeKernel{services: map[ServiceID]Service{}, known: map[string]bool{}}
	for _, s := range known {
		k.known[s] = true
	}
	for _, s := range services {
		k.services[s.ServiceID] = s
	}
	return k
}

func (k *fakeKernel) Services(context.Context) ([]Service, error) {
	if k.listErr != nil {
		return nil, k.listErr
	}
	var out []Service
	for _, s := range k.services {
		out = append(out, s)
	}
	return out, nil
}

func (k *fakeKernel) SetScheduler(_ context.Context, svc Service, sched string) error {
	k.sets = append(k.sets, svc.ServiceID.String()+" "+sched)
	cur, ok := k.services[svc.ServiceID]
	switch {
	case !ok:
		return unix.ESRCH
	case !k.known[sched]:
		return fmt.Errorf("netlink receive: %w", unix.ENOENT)
	}
	cur.Scheduler = sched
	k.services[svc.ServiceID] = cur
	return nil
}

var (
	webID = ServiceID{Family: unix.AF_INET, Protocol: unix.IPPROTO_TCP, Addr: netip.MustParseAddr("10.0.0.10"), Port: 80}
	dnsID = ServiceID{Family: unix.AF_INET, Protocol: unix.IPPROTO_UDP, Addr: netip.MustParseAddr("10.0.0.10"), Port: 53}
	fwmID = ServiceID{Family: unix.AF_INET6, FWMark: 7}
)

func wantedSvc(key, proto, addr string, port int, fwmark uint32, sched, kaSched string) bundle.IPVSService {
	s := bundle.IPVSService{Key: key, Protocol: proto, Address: addr, Port: port, FWMark: fwmark, Scheduler: sched, KeepalivedScheduler: kaSched}
	if fwmark != 0 {
		s.Family = "inet6"
	}
	return s
}

func TestReconcile(t *testing.T) {
	web := wantedSvc("tcp 10.0.0.10:80", "tcp", "10.0.0.10", 80, 0, "sed", "wlc")
	dns := wantedSvc("udp 10.0.0.10:53", "udp", "10.0.0.10", 53, 0, "dllc", "wlc")
	fwm := wantedSvc("fwmark 7", "tcp", "", 0, 7, "nq", "wlc")
	same := wantedSvc("tcp 10.0.0.10:80", "tcp", "10.0.0.10", 80, 0, "wlc", "wlc")
	known := []string{"wlc", "sed", "nq", "rr"}
	tests := []struct {
		name      string
		wanted    []bundle.IPVSService
		kernel    *fakeKernel
		wantSets  []string
		want      []Status
		wantFinal map[ServiceID]string // scheduler in the kernel afterwards
	}{
		{
			name:   "differing schedulers are set",
			wanted: []bundle.IPVSService{web, fwm},
			kernel: newFakeKernel(known,
				Service{ServiceID: webID, Scheduler: "wlc"}, Service{ServiceID: fwmID, Scheduler: "wlc"}),
			wantSets: []string{"TCP 10.0.0.10:80 sed", "FWM 7 IPv6 nq"},
			want: []Status{
				{Key: "tcp 10.0.0.10:80", Wanted: "sed", InForce: "sed"},
				{Key: "fwmark 7", Wanted: "nq", InForce: "nq"},
			},
			wantFinal: map[ServiceID]string{webID: "sed", fwmID: "nq"},
		},
		{
			name:      "already right: nothing set",
			wanted:    []bundle.IPVSService{same},
			kernel:    newFakeKernel(known, Service{ServiceID: webID, Scheduler: "wlc"}),
			want:      []Status{{Key: "tcp 10.0.0.10:80", Wanted: "wlc", InForce: "wlc"}},
			wantFinal: map[ServiceID]string{webID: "wlc"},
		},
		{
			name:     "unknown scheduler: keepalived's stays, the status says why",
			wanted:   []bundle.IPVSService{dns},
			kernel:   newFakeKernel(known, Service{ServiceID: dnsID, Scheduler: "wlc"}),
			wantSets: []string{"UDP 10.0.0.10:53 dllc"},
			want: []Status{{
				Key: "udp 10.0.0.10:53", Wanted: "dllc", InForce: "wlc",
				Message: "kernel refused scheduler dllc: no such scheduler (the kernel found no module ip_vs_dllc); wlc stays in force",
			}},
			wantFinal: map[ServiceID]string{dnsID: "wlc"},
		},
		{
			name:   "service not created yet",
			wanted: []bundle.IPVSService{web},
			kernel: newFakeKernel(known),
			want: []Status{{
				Key: "tcp 10.0.0.10:80", Wanted: "sed",
				Message: "the kernel has no such service (yet): keepalived has not created it",
			}},
			wantFinal: map[ServiceID]string{},
		},
		{
			name:      "services keepalived does not manage are left alone",
			wanted:    []bundle.IPVSService{web},
			kernel:    newFakeKernel(known, Service{ServiceID: webID, Scheduler: "sed"}, Service{ServiceID: dnsID, Scheduler: "rr"}),
			want:      []Status{{Key: "tcp 10.0.0.10:80", Wanted: "sed", InForce: "sed"}},
			wantFinal: map[ServiceID]string{webID: "sed", dnsID: "rr"},
		},
		{
			name:   "kernel unreadable",
			wanted: []bundle.IPVSService{web},
			kernel: &fakeKernel{listErr: errors.New("the kernel has no IPVS (module ip_vs not loaded)")},
			want: []Status{{
				Key: "tcp 10.0.0.10:80", Wanted: "sed",
				Message: "cannot read the kernel's IPVS table: the kernel has no IPVS (module ip_vs not loaded)",
			}},
		},
		{
			name:   "no ipvs.json: the kernel is not asked",
			kernel: &fakeKernel{listErr: errors.New("must not be called")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{
				Kernel: tt.kernel,
				Wanted: func() ([]bundle.IPVSService, error) { return tt.wanted, nil },
				Logger: slog.New(slog.DiscardHandler),
			}
			r.Reconcile(context.Background())
			final := map[ServiceID]string{}
			for id, s := range tt.kernel.services {
				final[id] = s.Scheduler
			}
			if tt.wantFinal == nil {
				final = nil
			}
			got := []any{tt.kernel.sets, r.Statuses(), final}
			want := []any{tt.wantSets, tt.want, tt.wantFinal}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[sets, statuses, kernel] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileKeepsScheduler: keepalived puts its own scheduler back (a
// reload); the next reconcile sets the wanted one again. A refusal is
// retried every time but logged once.
func TestReconcileKeepsScheduler(t *testing.T) {
	web := wantedSvc("tcp 10.0.0.10:80", "tcp", "10.0.0.10", 80, 0, "sed", "wlc")
	dns := wantedSvc("udp 10.0.0.10:53", "udp", "10.0.0.10", 53, 0, "dllc", "wlc")
	k := newFakeKernel([]string{"wlc", "sed"},
		Service{ServiceID: webID, Scheduler: "wlc"}, Service{ServiceID: dnsID, Scheduler: "wlc"})
	var logs bytes.Buffer
	r := &Reconciler{
		Kernel: k,
		Wanted: func() ([]bundle.IPVSService, error) { return []bundle.IPVSService{web, dns}, nil },
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	for range 3 {
		r.Reconcile(context.Background())
		k.services[webID] = Service{ServiceID: webID, Scheduler: "wlc"} // keepalived reloads
	}
	wantSets := []string{
		"TCP 10.0.0.10:80 sed", "UDP 10.0.0.10:53 dllc",
		"TCP 10.0.0.10:80 sed", "UDP 10.0.0.10:53 dllc",
		"TCP 10.0.0.10:80 sed", "UDP 10.0.0.10:53 dllc",
	}
	if diff := cmp.Diff(wantSets, k.sets); diff != "" {
		t.Errorf("sets mismatch (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "kernel refused scheduler dllc"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "scheduler set"); n != 3 {
		t.Errorf("the scheduler was logged as set %d times, want 3:\n%s", n, logs.String())
	}
}

func TestFileWanted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ipvs.json")
	if got, err := FileWanted(path)(); got != nil || err != nil {
		t.Errorf("missing file: %v, %v; want nothing", got, err)
	}
	text := `{"services": [{"key": "k", "protocol": "tcp", "address": "10.0.0.1", "port": 80, "fwmark": 0,
		"scheduler": "sed", "keepalived_scheduler": "wlc"}]}`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := FileWanted(path)()
	if err != nil || len(got) != 1 || got[0].Scheduler != "sed" {
		t.Errorf("FileWanted = %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FileWanted(path)(); err == nil {
		t.Error("a broken file must be an error")
	}
}

func TestIDOf(t *testing.T) {
	for _, tt := range []struct {
		svc  bundle.IPVSService
		want ServiceID
	}{
		{wantedSvc("a", "tcp", "10.0.0.10", 80, 0, "wlc", "wlc"), webID},
		{wantedSvc("b", "udp", "10.0.0.10", 53, 0, "wlc", "wlc"), dnsID},
		{wantedSvc("c", "udp", "", 0, 7, "wlc", "wlc"), fwmID},
		{
			wantedSvc("d", "tcp", "fd00::10", 443, 0, "wlc", "wlc"),
			ServiceID{Family: unix.AF_INET6, Protocol: unix.IPPROTO_TCP, Addr: netip.MustParseAddr("fd00::10"), Port: 443},
		},
	} {
		if got := IDOf(tt.svc); got != tt.want {
			t.Errorf("IDOf(%s) = %v, want %v", tt.svc.Key, got, tt.want)
		}
	}
}
