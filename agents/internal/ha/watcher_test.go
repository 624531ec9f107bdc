package ha

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/testlog"
)

// fakeHost is the namespace: addresses by interface, links that are
// down, witnesses that answer.
type fakeHost struct {
	mu       sync.Mutex
	addrs    map[string][]netip.Prefix
	down     map[string]bool
	answers  map[string]bool
	deleted  []string // "dev prefix"
	addrsErr error
}

func newFakeHost() *fakeHost {
	return &fakeHost{addrs: map[string][]netip.Prefix{}, down: map[string]bool{}, answers: map[string]bool{}}
}

func (h *fakeHost) Addresses(context.Context) (map[string][]netip.Prefix, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]netip.Prefix{}
	for dev, ps := range h.addrs {
		out[dev] = slices.Clone(ps)
	}
	return out, h.addrsErr
}

func (h *fakeHost) DeleteAddress(_ context.Context, dev string, p netip.Prefix) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(h.addrs[dev], p)
	if i < 0 {
		return fmt.Errorf("ip addr del %s dev %s: Cannot assign requested address", p, dev)
	}
	h.addrs[dev] = slices.Delete(h.addrs[dev], i, i+1)
	h.deleted = append(h.deleted, dev+" "+p.String())
	return nil
}

func (h *fakeHost) LinkUp(_ context.Context, dev string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.down[dev], nil
}

func (h *fakeHost) Ping(_ context.Context, addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answers[addr]
}

func (h *fakeHost) addVIP(dev, vip string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addrs[dev] = append(h.addrs[dev], netip.MustParsePrefix(vip))
}

// fakeKeepalived has the pids the test sets.
type fakeKeepalived struct{ pid, vrrp atomic.Int64 }

func (k *fakeKeepalived) PID() int     { return int(k.pid.Load()) }
func (k *fakeKeepalived) VRRPPID() int { return int(k.vrrp.Load()) }

// sink collects events.
type sink struct {
	mu     sync.Mutex
	events []client.Event
}

func (s *sink) Add(events ...client.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, events...)
}

// take returns the events so far and forgets them.
func (s *sink) take() []client.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.events
	s.events = nil
	return out
}

// rig is a Watcher on fakes, with ha.json in a temporary live directory
// and the run directory under a temporary root.
type rig struct {
	w       *Watcher
	host    *fakeHost
	ka      *fakeKeepalived
	events  *sink
	haproxy atomic.Bool
	runDir  string
	now     time.Time
	logs    *testlog.Buffer
}

const (
	webGroup = `{"name": "web", "vrid": 51, "interface": "eth0", "priority": 150, "advert_ms": 200,
		"vips": ["10.77.100.10/32", "10.77.100.11/32"], "peers": ["10.77.1.4"], "witness": "10.77.1.254"}`
	dbGroup = `{"name": "db", "vrid": 52, "interface": "eth1", "priority": 100, "advert_ms": 1000,
		"vips": ["10.77.200.10/24"], "peers": ["10.77.1.4"], "witness": ""}`
)

func newRig(t *testing.T, standby bool, groups ...string) *rig {
	t.Helper()
	root := t.TempDir()
	r := &rig{host: newFakeHost(), ka: &fakeKeepalived{}, events: &sink{}, runDir: filepath.Join(root, "lb1"),
		now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), logs: &testlog.Buffer{}}
	r.haproxy.Store(true)
	r.host.answers["10.77.1.254"] = true
	r.w = &Watcher{
		ConfFile: filepath.Join(t.TempDir(), "ha.json"), RunRoot: root, Keepalived: r.ka,
		HAProxyRunning: r.haproxy.Load, Host: r.host, Events: r.events,
		Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    func() time.Time { return r.now },
	}
	r.writeConf(t, standby, groups...)
	t.Cleanup(func() {
		r.w.closeFIFO()
		if t.Failed() {
			t.Logf("watcher log:\n%s", r.logs.String())
		}
	})
	return r
}

// writeConf writes ha.json with the groups.
func (r *rig) writeConf(t *testing.T, standby bool, groups ...string) {
	t.Helper()
	text := fmt.Sprintf(`{"node": "lb1", "run_dir": %q, "fifo": %q, "standby": %v,
		"track_files": {"standby": %q, "haproxy": %q}, "groups": [%s]}`,
		r.runDir, filepath.Join(r.runDir, "vrrp.fifo"), standby, filepath.Join(r.runDir, "standby"),
		filepath.Join(r.runDir, "haproxy"), strings.Join(groups, ","))
	if err := os.WriteFile(r.w.ConfFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// advance moves the clock past a slow poll.
func (r *rig) advance() { r.now = r.now.Add(SlowPoll) }

func (r *rig) line(s string) Line {
	l, err := ParseLine(s)
	if err != nil {
		panic(err)
	}
	l.At = r.now
	return l
}

func (r *rig) states() map[string]string {
	out := map[string]string{}
	for _, s := range r.w.Statuses() {
		out[s.Group] = s.State
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrepare(t *testing.T) {
	r := newRig(t, false, webGroup)
	r.haproxy.Store(false)
	if err := os.MkdirAll(r.runDir, 0o755); err != nil { // left by someone else, too open
		t.Fatal(err)
	}
	if err := r.w.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(r.runDir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("run dir: %v, %v; want mode 0700", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Join(r.runDir, "vrrp.fifo")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("fifo: %v, %v; want a FIFO", st, err)
	}
	if got := readFile(t, filepath.Join(r.runDir, "standby")); got != "0\n" {
		t.Errorf("standby file %q, want 0", got)
	}
	if got := readFile(t, filepath.Join(r.runDir, "haproxy")); got != "1\n" {
		t.Errorf("haproxy file %q with HAProxy down, want 1", got)
	}
	r.writeConf(t, true, webGroup)
	r.haproxy.Store(true)
	if err := r.w.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(r.runDir, "standby")); got != "1\n" {
		t.Errorf("standby file %q after standby was asked, want 1", got)
	}
	if got := readFile(t, filepath.Join(r.runDir, "haproxy")); got != "0\n" {
		t.Errorf("haproxy file %q with HAProxy up, want 0", got)
	}
	if left, _ := filepath.Glob(filepath.Join(r.runDir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if got := r.states(); !cmp.Equal(got, map[string]string{"web": "unknown"}) {
		t.Errorf("states after Prepare %v, want web unknown", got)
	}

	// A run_dir outside the root is refused; no ha.json is no work.
	r.w.RunRoot = t.TempDir()
	if err := r.w.Prepare(context.Background()); err == nil || !strings.Contains(err.Error(), "is not in") {
		t.Errorf("run_dir outside the root: %v", err)
	}
	if err := os.Remove(r.w.ConfFile); err != nil {
		t.Fatal(err)
	}
	if err := r.w.Prepare(context.Background()); err != nil {
		t.Errorf("without ha.json: %v", err)
	}
	if got := r.w.Statuses(); len(got) != 0 {
		t.Errorf("statuses without ha.json: %+v", got)
	}
}

// TestHAProxyTrackFile: the haproxy track file is rewritten only when
// HAProxy's state changes.
func TestHAProxyTrackFile(t *testing.T) {
	r := newRig(t, false, webGroup)
	if err := r.w.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.runDir, "haproxy")
	stat := func() os.FileInfo {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	before := stat()
	for range 3 {
		r.w.syncHAProxyFile()
	}
	if !os.SameFile(before, stat()) {
		t.Error("the haproxy file was rewritten while HAProxy kept running")
	}
	r.haproxy.Store(false)
	r.w.syncHAProxyFile()
	if got := readFile(t, path); got != "1\n" || os.SameFile(before, stat()) {
		t.Errorf("haproxy file %q after HAProxy stopped, want 1, rewritten", got)
	}
	r.haproxy.Store(true)
	r.w.syncHAProxyFile()
	if got := readFile(t, path); got != "0\n" {
		t.Errorf("haproxy file %q after HAProxy came back, want 0", got)
	}
}

// TestDeriveAtStart: with keepalived already running, each group's state
// is read off the interfaces, without events.
func TestDeriveAtStart(t *testing.T) {
	app := strings.NewReplacer(`"web"`, `"app"`, `"eth0"`, `"eth2"`, "10.77.100", "10.77.150", `"vrid": 51`, `"vrid": 53`).Replace(webGroup)
	r := newRig(t, false, webGroup, dbGroup, app)
	r.ka.pid.Store(4242)
	r.host.addVIP("eth0", "10.77.100.11/32")
	r.host.addVIP("eth1", "10.77.200.10/32") // the db VIP, but not as keepalived adds it
	r.host.down["eth2"] = true
	r.w.Step(context.Background())
	want := map[string]string{"web": "master", "db": "backup", "app": "fault"}
	if diff := cmp.Diff(want, r.states()); diff != "" {
		t.Errorf("states mismatch (-want +got):\n%s", diff)
	}
	if got := r.events.take(); len(got) != 0 {
		t.Errorf("events at start: %+v", got)
	}
}

// TestFIFOEvents: each line that changes a state yields one event with
// the reason the agent can give.
func TestFIFOEvents(t *testing.T) {
	r := newRig(t, false, webGroup)
	r.ka.pid.Store(4242)
	ctx := context.Background()
	if err := r.w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	r.w.Step(ctx) // backup: no VIP
	type step struct {
		line    string
		setup   func()
		want    string // "old new priority reason", "" for no event
		wantNow string // the state after
	}
	standby := filepath.Join(r.runDir, "standby")
	steps := []step{
		{line: `INSTANCE "web" BACKUP 150`, wantNow: "backup"},
		{line: `INSTANCE "web" MASTER 150`, want: "backup master 150 " + ReasonNoMaster},
		{line: `INSTANCE "web" MASTER_RX_LOWER_PRI 150`, wantNow: "master"},
		{
			line:  `INSTANCE "web" FAULT 150`,
			setup: func() { _ = writeTrackFile(standby, true) },
			want:  "master fault 150 standby requested by an operator",
		},
		{line: `INSTANCE "web" BACKUP 150`, setup: func() { _ = writeTrackFile(standby, false) }, want: "fault backup 150 fault cleared"},
		{line: `INSTANCE "web" MASTER 150`, want: "backup master 150 " + ReasonNoMaster},
		{line: `INSTANCE "web" BACKUP 150`, want: "master backup 150 a higher-priority peer is master"},
		{
			line:  `INSTANCE "web" FAULT 150`,
			setup: func() { r.host.down["eth0"] = true; r.host.answers["10.77.1.254"] = false },
			want:  "backup fault 150 interface eth0 is down; witness 10.77.1.254 does not answer ping",
		},
		{line: `INSTANCE "web" BACKUP 150`, setup: func() { r.host.down["eth0"] = false; r.host.answers["10.77.1.254"] = true }, want: "fault backup 150 fault cleared"},
		{line: `INSTANCE "web" FAULT 150`, want: "backup fault 150 " + ReasonCheckFailed},
		{
			line:  `INSTANCE "web" BACKUP 150`,
			setup: func() { _ = writeTrackFile(filepath.Join(r.runDir, "haproxy"), true) },
			want:  "fault backup 150 fault cleared",
		},
		{line: `INSTANCE "web" FAULT 150`, want: "backup fault 150 haproxy is not running on this node"},
		{line: `INSTANCE "web" BACKUP_PRIORITY 120`, wantNow: "fault"},
		{line: `INSTANCE "other" MASTER 100`, wantNow: "fault"},
		{line: `GROUP "web" MASTER`, wantNow: "fault"},
		{line: `INSTANCE "web" STOP 120`, want: "fault stopped 120 keepalived stopped"},
	}
	for i, s := range steps {
		if s.setup != nil {
			s.setup()
		}
		r.now = r.now.Add(time.Second)
		r.w.observe(ctx, r.line(s.line))
		var got []string
		for _, e := range r.events.take() {
			if !e.At.Equal(r.now) || e.Group != "web" {
				t.Errorf("step %d: event %+v: want group web at %s", i, e, r.now)
			}
			got = append(got, fmt.Sprintf("%s %s %d %s", e.OldState, e.NewState, e.Priority, e.Reason))
		}
		var want []string
		if s.want != "" {
			want = []string{s.want}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("step %d (%s): events mismatch (-want +got):\n%s", i, s.line, diff)
		}
		if s.wantNow != "" && r.states()["web"] != s.wantNow {
			t.Errorf("step %d (%s): state %s, want %s", i, s.line, r.states()["web"], s.wantNow)
		}
	}
}

// TestKeepalivedKilled: a keepalived gone without a word leaves its VIPs;
// the agent removes them and reports the groups stopped, then reads the
// states off the interfaces when a new keepalived runs.
func TestKeepalivedKilled(t *testing.T) {
	r := newRig(t, false, webGroup, dbGroup)
	ctx := context.Background()
	r.ka.pid.Store(100)
	r.host.addVIP("eth0", "10.77.100.10/32")
	r.host.addVIP("eth0", "10.77.100.11/32")
	r.host.addVIP("eth0", "10.0.0.5/24") // not a VIP
	r.w.Step(ctx)
	if got := r.states(); got["web"] != "master" || got["db"] != "backup" {
		t.Fatalf("states before the kill: %v", got)
	}
	r.ka.pid.Store(0)
	r.now = r.now.Add(100 * time.Millisecond)
	r.w.checkKeepalived(ctx)
	want := []string{
		"db backup stopped keepalived is not running (killed or crashed)",
		"web master stopped keepalived is not running (killed or crashed); the agent removed the VIPs it left: 10.77.100.10/32, 10.77.100.11/32",
	}
	if diff := cmp.Diff(want, describe(r.events.take())); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"eth0 10.77.100.10/32", "eth0 10.77.100.11/32"}, r.host.deleted); diff != "" {
		t.Errorf("addresses deleted mismatch (-want +got):\n%s", diff)
	}
	// Still down: no more events; a VIP that came back is removed again
	// at the next slow poll, not before.
	r.host.addVIP("eth0", "10.77.100.10/32")
	r.now = r.now.Add(100 * time.Millisecond)
	r.w.checkKeepalived(ctx)
	if len(r.host.deleted) != 2 {
		t.Errorf("cleaned up again before a slow poll passed: %v", r.host.deleted)
	}
	r.advance()
	r.w.checkKeepalived(ctx)
	if len(r.host.deleted) != 3 || len(r.events.take()) != 0 {
		t.Errorf("after a slow poll: deleted %v; want the VIP removed again, without events", r.host.deleted)
	}
	// A new keepalived: the FIFO has a second to speak, then the states
	// are read off the interfaces.
	r.ka.pid.Store(200)
	r.w.checkKeepalived(ctx)
	if got := r.events.take(); len(got) != 0 {
		t.Errorf("events as soon as keepalived came back: %v", describe(got))
	}
	r.advance()
	r.w.checkKeepalived(ctx)
	want = []string{
		"web stopped backup keepalived started" + ReasonDerivedSuffix,
		"db stopped backup keepalived started" + ReasonDerivedSuffix,
	}
	if diff := cmp.Diff(want, describe(r.events.take())); diff != "" {
		t.Errorf("events after the restart mismatch (-want +got):\n%s", diff)
	}
}

// TestKeepalivedStopsCleanly: after keepalived's STOP line the group stays
// stopped while that process lingers, and comes back with a new one.
func TestKeepalivedStopsCleanly(t *testing.T) {
	r := newRig(t, false, webGroup)
	ctx := context.Background()
	r.ka.pid.Store(100)
	r.w.Step(ctx)
	r.w.observe(ctx, r.line(`INSTANCE "web" STOP 150`))
	r.w.checkKeepalived(ctx)
	r.ka.pid.Store(0)
	r.w.checkKeepalived(ctx)
	if diff := cmp.Diff([]string{"web backup stopped keepalived stopped"}, describe(r.events.take())); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	// Replaced between two checks: the FIFO's first line comes before
	// the check noticed.
	r.ka.pid.Store(300)
	r.w.observe(ctx, r.line(`INSTANCE "web" BACKUP 150`))
	r.w.observe(ctx, r.line(`INSTANCE "web" MASTER 150`))
	r.ka.pid.Store(400)
	r.host.addVIP("eth0", "10.77.100.10/32") // the killed one's: no master, the new one starts as backup
	r.w.observe(ctx, r.line(`INSTANCE "web" BACKUP 150`))
	want := []string{
		"web stopped backup keepalived started",
		"web backup master " + ReasonNoMaster,
		"web master stopped keepalived was restarted",
		"web stopped backup keepalived started",
	}
	got := describe(r.events.take())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// TestGroupRemoved: a group dropped from ha.json gets a last event.
func TestGroupRemoved(t *testing.T) {
	r := newRig(t, false, webGroup, dbGroup)
	r.ka.pid.Store(100)
	r.w.Step(context.Background())
	r.writeConf(t, false, webGroup)
	r.w.Step(context.Background())
	if diff := cmp.Diff([]string{"db backup stopped removed from this node's configuration"}, describe(r.events.take())); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if got := r.states(); !cmp.Equal(got, map[string]string{"web": "backup"}) {
		t.Errorf("states %v, want web only", got)
	}
	// A broken ha.json keeps the last good one.
	if err := os.WriteFile(r.w.ConfFile, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.w.Step(context.Background())
	if got := r.states(); !cmp.Equal(got, map[string]string{"web": "backup"}) {
		t.Errorf("states after a broken ha.json %v, want web still", got)
	}
	if !strings.Contains(r.logs.String(), "unexpected EOF") {
		t.Error("the broken ha.json was not logged")
	}
}

// TestFIFONotHeld: when keepalived's VRRP child does not hold the FIFO
// (keepalived 2.2 after some reloads), the states are read off the
// interfaces at every slow poll.
func TestFIFONotHeld(t *testing.T) {
	r := newRig(t, false, webGroup)
	ctx := context.Background()
	lines := make(chan Line, 16)
	if err := r.w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	r.ka.pid.Store(int64(sleeper.Process.Pid))
	r.ka.vrrp.Store(int64(sleeper.Process.Pid))
	r.w.refresh(ctx, lines) // the first miss: may be a reload
	if r.w.fifo == nil || !r.w.FIFOHeld() || r.states()["web"] != "backup" {
		t.Fatalf("after the first check: fifo open %v, broken %v, state %s; want open, not broken, backup",
			r.w.fifo != nil, !r.w.FIFOHeld(), r.states()["web"])
	}
	r.host.addVIP("eth0", "10.77.100.10/32")
	r.now = r.now.Add(KeepalivedPoll)
	r.w.refresh(ctx, lines)
	if r.states()["web"] != "backup" {
		t.Fatalf("state %s before the second check, want backup still", r.states()["web"])
	}
	r.advance()
	r.w.refresh(ctx, lines)
	if diff := cmp.Diff([]string{"web backup master " + ReasonNoMaster + ReasonDerivedSuffix}, describe(r.events.take())); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	// This test process holds the FIFO open (the reader does): as if
	// keepalived reopened it.
	r.ka.vrrp.Store(int64(os.Getpid()))
	r.advance()
	r.w.refresh(ctx, lines)
	if !r.w.FIFOHeld() || !strings.Contains(r.logs.String(), "writes to the notify fifo again") {
		t.Error("the FIFO held again was not noticed")
	}
}

// TestRun drives the loops through a real FIFO and the HAProxy check.
func TestRun(t *testing.T) {
	r := newRig(t, false, webGroup)
	r.w.Now = nil
	r.ka.pid.Store(100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "web derived backup", func() bool { return r.states()["web"] == "backup" })
	fifo, err := os.OpenFile(filepath.Join(r.runDir, "vrrp.fifo"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	if _, err := fifo.WriteString("INSTANCE \"web\" MASTER 150\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web master from the FIFO", func() bool { return r.states()["web"] == "master" })
	start := time.Now()
	r.haproxy.Store(false)
	haproxyFile := filepath.Join(r.runDir, "haproxy")
	waitFor(t, "haproxy file 1", func() bool { b, _ := os.ReadFile(haproxyFile); return string(b) == "1\n" })
	if d := time.Since(start); d > 3*HAProxyPoll {
		t.Errorf("the haproxy file took %s to say 1, want at most %s", d, 3*HAProxyPoll)
	}
	if _, err := fifo.WriteString("INSTANCE \"web\" FAULT 150\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web fault", func() bool { return r.states()["web"] == "fault" })
	want := []string{"web backup master " + ReasonNoMaster, "web master fault haproxy is not running on this node"}
	if diff := cmp.Diff(want, describe(r.events.take())); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// describe renders events as "group old new reason", in order.
func describe(events []client.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprintf("%s %s %s %s", e.Group, e.OldState, e.NewState, e.Reason))
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5s", what)
}

// TestLinesBeforeTheReader: keepalived wrote its states to the FIFO before
// the agent opened it (an agent late on a busy node). The reader drops
// them as stale; the states are then read off the interfaces, not left at
// what the agent had derived before keepalived became master.
func TestLinesBeforeTheReader(t *testing.T) {
	r := newRig(t, false, webGroup)
	ctx := context.Background()
	if err := r.w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	r.ka.pid.Store(4242)
	r.w.Step(ctx) // no VIP yet: backup
	if got := r.states()["web"]; got != "backup" {
		t.Fatalf("state %s before, want backup", got)
	}
	r.host.addVIP("eth0", "10.77.100.10/32")
	r.host.addVIP("eth0", "10.77.100.11/32")
	fifo, err := os.OpenFile(filepath.Join(r.runDir, "vrrp.fifo"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	if _, err := fifo.WriteString("INSTANCE \"web\" BACKUP 150\nINSTANCE \"web\" MASTER 150\n"); err != nil {
		t.Fatal(err)
	}
	r.advance()
	lines := make(chan Line, 16)
	r.w.refresh(ctx, lines)
	if got := r.states()["web"]; got != "master" {
		t.Errorf("state %s after the reader dropped keepalived's lines, want master", got)
	}
	if !strings.Contains(r.logs.String(), "stale_lines_dropped=2") {
		t.Errorf("the two lines were not dropped as stale:\n%s", r.logs.String())
	}
}
