package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
	"fulcrum/agents/internal/haproxytest"
	"fulcrum/agents/internal/ipvs"
	"fulcrum/agents/internal/testlog"
)

const token = "node-token-lb1"

// fakeAPI implements the agent endpoints of the Fulcrum API in memory.
type fakeAPI struct {
	mu        sync.Mutex
	newest    *client.Bundle
	reports   []client.Report
	statuses  []client.NodeStatus
	telemetry []client.Telemetry
}

func (f *fakeAPI) publish(rev int64, cfg string) {
	f.publishFiles(rev, map[string]string{bundle.MainFile: cfg})
}

func (f *fakeAPI) publishFiles(rev int64, files map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newest = &client.Bundle{Revision: rev, Node: "lb1", Files: files}
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Node "+token {
		http.Error(w, `{"detail": "bad token"}`, http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/api/v1/agent/desired/":
		f.desired(w, r)
	case "/api/v1/agent/reports/":
		var rep client.Report
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.reports = append(f.reports, rep)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "/api/v1/agent/status/":
		var st client.NodeStatus
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.statuses = append(f.statuses, st)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "/api/v1/agent/telemetry/":
		var tm client.Telemetry
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields() // as the API refuses unknown fields
		if err := dec.Decode(&tm); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.telemetry = append(f.telemetry, tm)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// desired answers at once when the newest revision differs from known,
// otherwise holds until one is published or the wait elapses.
func (f *fakeAPI) desired(w http.ResponseWriter, r *http.Request) {
	known, _ := strconv.ParseInt(r.URL.Query().Get("known"), 10, 64)
	wait, _ := strconv.Atoi(r.URL.Query().Get("wait"))
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		f.mu.Lock()
		b := f.newest
		f.mu.Unlock()
		if b != nil && b.Revision != known {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(b)
			return
		}
		if time.Now().After(deadline) || r.Context().Err() != nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitReports waits until n reports arrived and returns them.
func (f *fakeAPI) awaitReports(t *testing.T, n int) []client.Report {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f.mu.Lock()
		got := append([]client.Report(nil), f.reports...)
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("fewer than %d reports arrived", n)
	return nil
}

// awaitStatus waits for the first status and returns it.
func (f *fakeAPI) awaitStatus(t *testing.T) client.NodeStatus {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f.mu.Lock()
		got := append([]client.NodeStatus(nil), f.statuses...)
		f.mu.Unlock()
		if len(got) > 0 {
			return got[0]
		}
	}
	t.Fatal("no status arrived")
	return client.NodeStatus{}
}

// awaitTelemetry waits for a sample that satisfies ok and returns it.
func (f *fakeAPI) awaitTelemetry(t *testing.T, ok func(client.Telemetry) bool) client.Telemetry {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		f.mu.Lock()
		got := append([]client.Telemetry(nil), f.telemetry...)
		f.mu.Unlock()
		for _, tm := range got {
			if ok(tm) {
				return tm
			}
		}
	}
	t.Fatal("no matching telemetry arrived")
	return client.Telemetry{}
}

// ignoreMessage compares reports on revision and state; messages are
// checked by substring where it matters.
var ignoreMessage = cmpopts.IgnoreFields(client.Report{}, "Message")

// haproxyIn returns a Manager for the HAProxy of the agent whose state
// directory is dir.
func haproxyIn(bin, dir string) *haproxy.Manager {
	store := apply.Store{Dir: dir}
	return haproxy.New(bin, nil, store.LiveDir(), store.RunDir())
}

// TestAgentEndToEnd runs the whole agent against a fake API and the real
// HAProxy: two revisions go live under traffic, a broken one is refused,
// a dead HAProxy is restarted, HAProxy outlives the agent, a restarted
// agent resumes it, and a weight change goes live without a reload.
func TestAgentEndToEnd(t *testing.T) {
	bin := haproxytest.Binary(t)
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := haproxyIn(bin, dir).Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	port := haproxytest.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	addrA, addrB := haproxytest.Backend(t, "A"), haproxytest.Backend(t, "B")
	cfgA := haproxytest.Config(addrA, port)
	cfgB := haproxytest.Config(addrB, port)
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	args := []string{
		"--api", srv.URL, "--token-file", writeToken(t, " "+token+"\n"), "--state-dir", dir,
		"--haproxy", bin, "--wait", "1s", "--log-level", "debug",
	}

	api.publish(1, cfgA)
	ctx, stop := context.WithCancel(context.Background())
	var logs testlog.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, args, &logs) }()
	var onceLogs testlog.Buffer
	t.Cleanup(func() {
		stop()
		if t.Failed() || testing.Verbose() {
			t.Logf("agent log:\n%s\n--once log:\n%s", logs.String(), onceLogs.String())
		}
	})

	api.awaitReports(t, 1)
	if st := api.awaitStatus(t); st.Networks == nil || st.IPVS == nil || len(st.IPVS) != 0 {
		t.Errorf("status = %+v, want the node's networks and no IPVS service", st)
	}
	haproxytest.WaitFor(t, url, "A", 5*time.Second)
	traffic := haproxytest.StartTraffic(url, 4, 60*time.Second)
	api.publish(2, cfgB)
	api.awaitReports(t, 2)
	haproxytest.WaitFor(t, url, "B", 5*time.Second)
	api.publish(3, cfgB+"    bogus-keyword on\n")
	reports := api.awaitReports(t, 3)
	time.Sleep(1500 * time.Millisecond) // the agent now holds; it must not retry revision 3
	answers, failures := traffic.Stop()
	if len(failures) > 0 {
		t.Fatalf("%d requests failed across the agent's reloads, first: %s", len(failures), failures[0])
	}
	if answers["A"] == 0 || answers["B"] == 0 {
		t.Errorf("traffic did not follow the revisions: %v", answers)
	}
	want := []client.Report{
		{Revision: 1, State: client.StateApplied},
		{Revision: 2, State: client.StateApplied},
		{Revision: 3, State: client.StateFailed},
	}
	if diff := cmp.Diff(want, api.awaitReports(t, 3), ignoreMessage); diff != "" {
		t.Errorf("reports mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(reports[2].Message, "bogus-keyword") {
		t.Errorf("failure report lacks haproxy's output: %q", reports[2].Message)
	}

	// HAProxy dies under the running agent: restarted within a poll.
	if err := haproxyIn(bin, dir).Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	haproxytest.WaitFor(t, url, "B", 10*time.Second)

	stop()
	if code := <-done; code != 0 {
		t.Fatalf("agent exited %d", code)
	}
	if got, err := haproxytest.Get(url); err != nil || got != "B" {
		t.Fatalf("after the agent exited haproxy answered %q (err %v), want B", got, err)
	}

	// Simulate a reboot: HAProxy gone, agent restarted with a new revision waiting.
	if err := haproxyIn(bin, dir).Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	api.publish(4, cfgA)
	if code := run(context.Background(), append(args, "--once"), &onceLogs); code != 0 {
		t.Fatalf("--once exited %d", code)
	}
	if !strings.Contains(onceLogs.String(), "starting daemon from live configuration") {
		t.Errorf("restarted agent did not resume haproxy from the live config")
	}
	want = append(want, client.Report{Revision: 4, State: client.StateApplied})
	if diff := cmp.Diff(want, api.awaitReports(t, 4), ignoreMessage); diff != "" {
		t.Errorf("reports mismatch (-want +got):\n%s", diff)
	}
	haproxytest.WaitFor(t, url, "A", 5*time.Second)

	// A pool, then a weight change: applied through the runtime API, the
	// worker stays and the traffic follows.
	pool := func(weightA int) map[string]string {
		return haproxytest.Pool(port,
			haproxytest.PoolServer{Name: "s1", Addr: addrA, Weight: weightA},
			haproxytest.PoolServer{Name: "s2", Addr: addrB, Weight: 1})
	}
	api.publishFiles(5, pool(1))
	if code := run(context.Background(), append(args, "--once"), &onceLogs); code != 0 {
		t.Fatalf("--once exited %d", code)
	}
	// The telemetry names the pool's servers as members, with their health.
	tm := api.awaitTelemetry(t, func(tm client.Telemetry) bool { return len(tm.Members) == 2 })
	wantMembers := []client.MemberTelemetry{
		{Pool: "web", Member: "s1", Health: client.Health{Status: client.HealthUnchecked}},
		{Pool: "web", Member: "s2", Health: client.Health{Status: client.HealthUnchecked}},
	}
	if diff := cmp.Diff(wantMembers, tm.Members, cmpopts.IgnoreFields(client.MemberTelemetry{}, "Traffic")); diff != "" || tm.IntervalS != 10 {
		t.Errorf("telemetry (interval %d s) members mismatch (-want +got):\n%s", tm.IntervalS, diff)
	}
	before, err := haproxyIn(bin, dir).CLI().ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	api.publishFiles(6, pool(0))
	if code := run(context.Background(), append(args, "--once"), &onceLogs); code != 0 {
		t.Fatalf("--once exited %d", code)
	}
	reports = api.awaitReports(t, 6)
	if got := reports[5]; got.State != client.StateApplied || got.Message != "applied at runtime without reload: 1 server change(s)" {
		t.Errorf("revision 6 report = %+v, want applied at runtime", got)
	}
	after, err := haproxyIn(bin, dir).CLI().ShowProc(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after.Reloads != before.Reloads || !cmp.Equal(after.Workers, before.Workers) {
		t.Errorf("the weight change reloaded haproxy: %+v -> %+v", before, after)
	}
	for range 10 {
		if got, err := haproxytest.Get(url); err != nil || got != "B" {
			t.Fatalf("with s1 at weight 0 got %q (err %v), want B", got, err)
		}
	}
}

func TestOnceBadToken(t *testing.T) {
	srv := httptest.NewServer(&fakeAPI{})
	t.Cleanup(srv.Close)
	var logs testlog.Buffer
	args := []string{"--api", srv.URL, "--token-file", writeToken(t, "wrong"), "--state-dir", t.TempDir(), "--once"}
	if code := run(context.Background(), args, &logs); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(logs.String(), "401") {
		t.Errorf("log does not mention the 401:\n%s", logs.String())
	}
}

// An agent pinned to another certificate than the API's sends nothing there and says why.
func TestOnceRefusesAnotherCertificate(t *testing.T) {
	api := &fakeAPI{}
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	pin := filepath.Join(t.TempDir(), "cluster.crt")
	if err := os.WriteFile(pin, []byte(otherCertificate), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	args := []string{"--api", srv.URL, "--api-pin", pin, "--token-file", writeToken(t, "s3cret"),
		"--state-dir", t.TempDir(), "--once"}
	if code := run(context.Background(), args, &logs); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(logs.String(), "not the pinned one") {
		t.Errorf("log does not say the certificate is not the pinned one:\n%s", logs.String())
	}
	// A pin that is no certificate stops the agent at start.
	if err := os.WriteFile(pin, []byte("nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs = testlog.Buffer{}
	if code := run(context.Background(), args, &logs); code != 1 || !strings.Contains(logs.String(), "no PEM CERTIFICATE") {
		t.Errorf("exit %d, log:\n%s", code, logs.String())
	}
}

// otherCertificate is a self-signed certificate that is not httptest's.
const otherCertificate = `-----BEGIN CERTIFICATE-----
MIIBeDCCAR2gAwIBAgIUNct4nUSGhX+tapTuVjervPs5vOgwCgYIKoZIzj0EAwIw
EDEOMAwGA1UEAwwFb3RoZXIwIBcNMjYxMTI4MDgwMjEyWhgPMjEyNjExMDQwODAy
MTJaMBAxDjAMBgNVBAMMBW90aGVyMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
kEt9y58W0s0aV9rE6AqNEsw9ZWQGFqG3aHbvoA24w+43ObSi0GcRVF5ap+z+cN4C
hneIYSr8QVNL5vD1em5QX6NTMFEwHQYDVR0OBBYEFLGLnAmmmhsrpkOOdWSRQP/2
s7AAMB8GA1UdIwQYMBaAFLGLnAmmmhsrpkOOdWSRQP/2s7AAMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhANjksgS1vL/yZOyLZ4Rmc9GMayM4k6Ey
7U9V1KATov7mAiEAgigAAtvl1lbboy6HV50mIc34QtPyQhZtU2+Ra9xVQKI=
-----END CERTIFICATE-----
`

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr string
	}{
		{
			name: "defaults",
			args: []string{"--api", "https://fulcrum:8443", "--token-file", "/etc/fulcrum/token"},
			want: options{
				api: "https://fulcrum:8443", tokenFile: "/etc/fulcrum/token", stateDir: "/var/lib/fulcrum-agent",
				haproxyBin: "haproxy", keepalivedBin: "keepalived", nftBin: "nft", logLevel: "info", wait: 30 * time.Second,
				confirmGrace: 10 * time.Second, telemetry: 10 * time.Second,
			},
		},
		{
			name: "everything set",
			args: []string{
				"--api", "http://api", "--token-file", "t", "--state-dir", "/s", "--haproxy", "/usr/sbin/haproxy",
				"--exec-prefix", "ip netns exec fl-lb", "--wait", "55s", "--once", "--log-level", "debug",
				"--keepalived", "/usr/sbin/keepalived", "--keepalived-log", "/var/log/k.log", "--nft", "/usr/sbin/nft",
				"--netns", "fl-lb", "--confirm-grace", "2s", "--telemetry-interval", "0", "--firewall",
			},
			want: options{
				api: "http://api", tokenFile: "t", stateDir: "/s", haproxyBin: "/usr/sbin/haproxy",
				keepalivedBin: "/usr/sbin/keepalived", keepalivedLog: "/var/log/k.log", nftBin: "/usr/sbin/nft", firewall: true, netns: "fl-lb",
				execPrefix: "ip netns exec fl-lb", logLevel: "debug", wait: 55 * time.Second, once: true,
				confirmGrace: 2 * time.Second,
			},
		},
		{
			name: "keepalived disabled",
			args: []string{"--api", "http://a", "--token-file", "t", "--keepalived", ""},
			want: options{
				api: "http://a", tokenFile: "t", stateDir: "/var/lib/fulcrum-agent",
				haproxyBin: "haproxy", nftBin: "nft", logLevel: "info", wait: 30 * time.Second,
				confirmGrace: 10 * time.Second, telemetry: 10 * time.Second,
			},
		},
		{name: "missing required", args: []string{"--once"}, wantErr: "--api, --token-file"},
		{name: "tiny wait", args: []string{"--api", "http://a", "--token-file", "t", "--wait", "10ms"}, wantErr: "at least 1s"},
		{name: "negative grace", args: []string{"--api", "http://a", "--token-file", "t", "--confirm-grace", "-1s"}, wantErr: "--confirm-grace"},
		{name: "tiny telemetry interval", args: []string{"--api", "http://a", "--token-file", "t", "--telemetry-interval", "100ms"}, wantErr: "--telemetry-interval"},
		{name: "huge telemetry interval", args: []string{"--api", "http://a", "--token-file", "t", "--telemetry-interval", "10m"}, wantErr: "--telemetry-interval"},
		{name: "stray argument", args: []string{"--api", "http://a", "--token-file", "t", "extra"}, wantErr: "unexpected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// refusingKernel has one service on wlc and knows no other scheduler.
type refusingKernel struct{}

func (refusingKernel) Services(context.Context) ([]ipvs.Service, error) {
	return []ipvs.Service{{ServiceID: ipvs.IDOf(dllcService), Scheduler: "wlc"}}, nil
}

func (refusingKernel) SetScheduler(context.Context, ipvs.Service, string) error {
	return fmt.Errorf("netlink receive: %w", unix.ENOENT)
}

var dllcService = bundle.IPVSService{
	Key: "tcp 10.0.0.10:80", Name: "web", Protocol: "tcp", Address: "10.0.0.10", Port: 80, Scheduler: "dllc", KeepalivedScheduler: "wlc",
}

// TestIPVSStatuses: the reconciler's outcome reaches the status as the API
// takes it; without keepalived there is none.
func TestIPVSStatuses(t *testing.T) {
	n := &node{reconciler: &ipvs.Reconciler{
		Kernel: refusingKernel{},
		Wanted: func() ([]bundle.IPVSService, error) { return []bundle.IPVSService{dllcService}, nil },
		Logger: slog.New(slog.DiscardHandler),
	}}
	n.reconciler.Reconcile(context.Background())
	want := []client.IPVSStatus{{
		Key: "tcp 10.0.0.10:80", Name: "web", SchedulerWanted: "dllc", SchedulerInForce: "wlc",
		Message: "kernel refused scheduler dllc: no such scheduler (the kernel found no module ip_vs_dllc); wlc stays in force",
	}}
	if diff := cmp.Diff(want, n.ipvsStatuses()); diff != "" {
		t.Errorf("statuses mismatch (-want +got):\n%s", diff)
	}
	if got := (&node{}).ipvsStatuses(); got != nil {
		t.Errorf("without keepalived: %v, want none", got)
	}
}

// TestVRRPStatuses: without keepalived there is no VRRP state to report.
func TestVRRPStatuses(t *testing.T) {
	if got := (&node{}).vrrpStatuses(); got != nil {
		t.Errorf("without keepalived: %v, want none", got)
	}
	n, err := newNode(options{api: "http://127.0.0.1:1", tokenFile: writeToken(t, token), stateDir: t.TempDir(),
		haproxyBin: "haproxy", keepalivedBin: "keepalived"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	if n.ha == nil || n.haEvents == nil || n.reporter.VRRP == nil {
		t.Fatal("keepalived managed, but no VRRP watcher, outbox or status source")
	}
	if got := n.vrrpStatuses(); len(got) != 0 {
		t.Errorf("without ha.json: %v, want none", got)
	}
}

func TestNetnsPath(t *testing.T) {
	for in, want := range map[string]string{"": "", "fl-lb": "/run/netns/fl-lb", "/proc/1/ns/net": "/proc/1/ns/net"} {
		if got := netnsPath(in); got != want {
			t.Errorf("netnsPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func writeToken(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
