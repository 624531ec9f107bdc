package status

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
)

func TestParseIPAddr(t *testing.T) {
	out, err := os.ReadFile(filepath.Join("testdata", "ip-addr.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseIPAddr(out)
	if err != nil {
		t.Fatal(err)
	}
	// Host- and link-scope addresses are left out; an address on two
	// interfaces is listed once; a point-to-point address gives its local
	// side.
	want := []string{"10.0.0.1/24", "10.0.0.10/32", "192.168.99.1/32", "fd00::1/64"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("networks mismatch (-want +got):\n%s", diff)
	}
	if got, err := ParseIPAddr([]byte("[]")); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no interfaces: %v, %v; want an empty list", got, err)
	}
	if _, err := ParseIPAddr([]byte("ip: command failed")); err == nil {
		t.Error("garbage must be an error")
	}
}

// TestIPAddr runs the real ip command in the test's own namespace.
func TestIPAddr(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	got, err := IPAddr{}.Networks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range got {
		if !strings.Contains(n, "/") || strings.HasPrefix(n, "127.") {
			t.Errorf("network %q: want a global address with its prefix", n)
		}
	}
}

// fakeNetworks answers from a script, one answer per call.
type fakeNetworks struct{ answers []networksAnswer }

type networksAnswer struct {
	networks []string
	err      error
}

func (f *fakeNetworks) Networks(context.Context) ([]string, error) {
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a.networks, a.err
}

// fakeSender records what the API took; it refuses while down is set.
type fakeSender struct {
	down bool
	got  []client.NodeStatus
}

func (f *fakeSender) Status(_ context.Context, s client.NodeStatus) error {
	if f.down {
		return errors.New("connection refused")
	}
	f.got = append(f.got, s)
	return nil
}

func TestReporter(t *testing.T) {
	netA, netB := []string{"10.0.0.1/24"}, []string{"10.0.0.1/24", "fd00::1/64"}
	refused := []client.IPVSStatus{{Key: "tcp 10.0.0.10:80", SchedulerWanted: "dllc", SchedulerInForce: "wlc", Message: "kernel refused"}}
	type tick struct {
		at       time.Duration // since the start
		networks networksAnswer
		ipvs     []client.IPVSStatus
		members  []client.MemberStatus
		vrrp     []client.VRRPStatus
		apiDown  bool
		wantSent bool
		wantErr  string
	}
	tests := []struct {
		name  string
		ticks []tick
	}{
		{
			name: "sent at start, then only on change or after a minute",
			ticks: []tick{
				{at: 0, networks: networksAnswer{networks: netA}, wantSent: true},
				{at: 5 * time.Second, networks: networksAnswer{networks: netA}},
				{at: 10 * time.Second, networks: networksAnswer{networks: netB}, wantSent: true},
				{at: 15 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused, wantSent: true},
				{at: 70 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused},
				{at: 75 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused, wantSent: true},
				{at: 80 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused, members: loaded(500), wantSent: true},
				{at: 85 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused, members: loaded(500)},
				{at: 90 * time.Second, networks: networksAnswer{networks: netB}, ipvs: refused, members: loaded(520), wantSent: true},
			},
		},
		{
			name: "a VRRP state change is sent, the same state again is not",
			ticks: []tick{
				{at: 0, networks: networksAnswer{networks: netA}, vrrp: vrrpState("backup", 0), wantSent: true},
				{at: 5 * time.Second, networks: networksAnswer{networks: netA}, vrrp: vrrpState("backup", 0)},
				{at: 10 * time.Second, networks: networksAnswer{networks: netA}, vrrp: vrrpState("master", 8), wantSent: true},
				{at: 15 * time.Second, networks: networksAnswer{networks: netA}, vrrp: vrrpState("master", 8)},
			},
		},
		{
			name: "api down: retried at every poll until taken",
			ticks: []tick{
				{at: 0, networks: networksAnswer{networks: netA}, apiDown: true, wantErr: "connection refused"},
				{at: 5 * time.Second, networks: networksAnswer{networks: netA}, apiDown: true, wantErr: "connection refused"},
				{at: 10 * time.Second, networks: networksAnswer{networks: netA}, wantSent: true},
				{at: 15 * time.Second, networks: networksAnswer{networks: netA}},
			},
		},
		{
			name: "networks unreadable: nothing sent",
			ticks: []tick{
				{at: 0, networks: networksAnswer{err: errors.New("exit status 1")}, wantErr: "read networks"},
				{at: 5 * time.Second, networks: networksAnswer{networks: netA}, wantSent: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			nets := &fakeNetworks{}
			sender := &fakeSender{}
			var now time.Time
			var ipvs []client.IPVSStatus
			var members []client.MemberStatus
			var vrrp []client.VRRPStatus
			r := &Reporter{
				Sender: sender, Networks: nets, IPVS: func() []client.IPVSStatus { return ipvs },
				Members: func() []client.MemberStatus { return members },
				VRRP:    func() []client.VRRPStatus { return vrrp },
				Logger:  slog.New(slog.DiscardHandler), Now: func() time.Time { return now },
			}
			for i, tk := range tt.ticks {
				now, ipvs, members, vrrp, sender.down = start.Add(tk.at), tk.ipvs, tk.members, tk.vrrp, tk.apiDown
				nets.answers = []networksAnswer{tk.networks}
				before := len(sender.got)
				err := r.Step(context.Background())
				if (err == nil) != (tk.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tk.wantErr)) {
					t.Errorf("tick %d: error = %v, want %q", i, err, tk.wantErr)
				}
				if sent := len(sender.got) > before; sent != tk.wantSent {
					t.Fatalf("tick %d: sent = %v, want %v", i, sent, tk.wantSent)
				}
				if !tk.wantSent {
					continue
				}
				want := client.NodeStatus{Networks: tk.networks.networks, IPVS: tk.ipvs, Members: tk.members, VRRP: tk.vrrp}
				if want.IPVS == nil {
					want.IPVS = []client.IPVSStatus{}
				}
				if want.Members == nil {
					want.Members = []client.MemberStatus{}
				}
				if want.VRRP == nil {
					want.VRRP = []client.VRRPStatus{}
				}
				if diff := cmp.Diff(want, sender.got[len(sender.got)-1]); diff != "" {
					t.Errorf("tick %d: status mismatch (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestRunSendsAtOnceAndPolls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sender := &fakeSender{}
	var sleeps []time.Duration
	r := &Reporter{
		Sender:   sender,
		Networks: &fakeNetworks{answers: []networksAnswer{{networks: []string{"10.0.0.1/24"}}, {networks: []string{"10.0.0.2/24"}}}},
		Logger:   slog.New(slog.DiscardHandler),
		Sleep: func(_ context.Context, d time.Duration) error {
			sleeps = append(sleeps, d)
			if len(sleeps) == 2 {
				cancel()
				return context.Canceled
			}
			return nil
		},
	}
	r.Run(ctx)
	if len(sender.got) != 2 || !cmp.Equal(sleeps, []time.Duration{DefaultPoll, DefaultPoll}) {
		t.Errorf("sent %d statuses with sleeps %v; want 2 and two default polls", len(sender.got), sleeps)
	}
}

// loaded is the status of one DLLC member with the given load (a fresh
// pointer each time, as the feedback loop makes them).
func loaded(milli int64) []client.MemberStatus {
	conns := 3
	return []client.MemberStatus{{Pool: "app", Member: "s1", Layer: "ipvs", LoadMilli: &milli, Connections: &conns, Feed: "ip_vs_dllc"}}
}

// vrrpState is group web's state, entered at second sec of 2026 (a fresh
// pointer each time, as the ha Watcher makes them).
func vrrpState(state string, sec int) []client.VRRPStatus {
	since := time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC)
	return []client.VRRPStatus{{Group: "web", State: state, Priority: 150, Since: &since}}
}

// fulcrum-management's state file, as it changes, is in the statuses sent.
func TestManagementStateIsSentWhenItChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state")
	sender, nets := &fakeSender{}, &fakeNetworks{}
	r := &Reporter{
		Sender:     sender,
		Networks:   nets,
		Management: ManagementState(file),
		Logger:     slog.New(slog.DiscardHandler),
	}
	for i, step := range []struct {
		content  string // "-": no file
		want     string
		wantSent bool
	}{
		{"-", "", true}, // no management VIP (yet): nothing said about it
		{"BACKUP\n", "backup", true},
		{"BACKUP\n", "backup", false},
		{"MASTER\n", "master", true},
		{"master; rm -rf /\n", "", true}, // not one of its states: nothing said
		{"FAULT", "fault", true},
		{"STOP\n", "stopped", true},
	} {
		if step.content == "-" {
			_ = os.Remove(file)
		} else if err := os.WriteFile(file, []byte(step.content), 0o644); err != nil {
			t.Fatal(err)
		}
		nets.answers = []networksAnswer{{networks: []string{"10.0.0.1/24"}}}
		before := len(sender.got)
		if err := r.Step(context.Background()); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if sent := len(sender.got) > before; sent != step.wantSent {
			t.Fatalf("step %d: sent = %v, want %v", i, sent, step.wantSent)
		}
		if got := sender.got[len(sender.got)-1].Management; got != step.want {
			t.Errorf("step %d: management = %q, want %q", i, got, step.want)
		}
	}
}
