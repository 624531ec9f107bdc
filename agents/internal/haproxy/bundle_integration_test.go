package haproxy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
	"fulcrum/agents/internal/haproxytest"
)

// TestIncludeFiles applies sets whose haproxy.cfg reads a haproxy.d/ file
// through FULCRUM_CONF_DIR: each set goes live as a whole, files it drops
// disappear, modes are as the contract says, the check reads the
// candidate's files, and a set HAProxy refuses is rolled back as a whole.
func TestIncludeFiles(t *testing.T) {
	n := newNode(t)
	rev1 := map[string]string{bundle.MainFile: haproxytest.IncludeConfig("one.txt", n.Port), "haproxy.d/one.txt": "one"}
	n.applyFiles(t, 1, rev1, client.StateApplied)
	haproxytest.WaitFor(t, n.URL, "one", 5*time.Second)

	traffic := haproxytest.StartTraffic(n.URL, 4, 60*time.Second)
	rev2 := map[string]string{
		bundle.MainFile:     haproxytest.IncludeConfig("two.txt", n.Port),
		"haproxy.d/two.txt": "two",
		"haproxy.d/ping.sh": "#!/bin/sh\nexit 0\n",
	}
	n.applyFiles(t, 2, rev2, client.StateApplied)
	haproxytest.WaitFor(t, n.URL, "two", 5*time.Second)
	requireLive(t, n, rev2, 2)
	requireModes(t, n.Applier.Store.LiveDir(), map[string]os.FileMode{
		".": 0o700, "haproxy.d": 0o700, "haproxy.cfg": 0o600, "haproxy.d/two.txt": 0o600, "haproxy.d/ping.sh": 0o700,
	})

	// The live set still has two.txt; a check reading it instead of the
	// candidate's haproxy.d would pass this.
	before := n.showProc(t)
	r := n.applyFiles(t, 3, map[string]string{bundle.MainFile: rev2[bundle.MainFile]}, client.StateFailed)
	if !strings.Contains(r.Message, "haproxy.d/two.txt") {
		t.Errorf("message should name the missing file:\n%s", r.Message)
	}
	if after := n.showProc(t); after.Reloads != before.Reloads {
		t.Errorf("a set rejected by the check caused a reload (%d -> %d)", before.Reloads, after.Reloads)
	}
	answers, failures := traffic.Stop()
	requireNoFailures(t, answers, failures)
	if answers["one"] == 0 || answers["two"] == 0 {
		t.Errorf("traffic did not follow the sets: %v", answers)
	}

	unbindable := map[string]string{
		bundle.MainFile:       haproxytest.IncludeConfig("three.txt", n.Port, haproxytest.HoldPort(t)),
		"haproxy.d/three.txt": "three",
	}
	before = n.showProc(t)
	r = n.applyFiles(t, 4, unbindable, client.StateFailed)
	if !strings.Contains(r.Message, "address already in use") || !strings.Contains(r.Message, "nothing was reloaded") {
		t.Errorf("message should say the bind was tried first and refused:\n%s", r.Message)
	}
	if after := n.showProc(t); after.Reloads != before.Reloads {
		t.Errorf("a set whose listener cannot bind caused a reload (%d -> %d)", before.Reloads, after.Reloads)
	}
	requireLive(t, n, rev2, 2)
	haproxytest.WaitFor(t, n.URL, "two", 5*time.Second)
}

// TestRuntimeServerChanges changes server weights and admin states and
// requires that no reload happens, that HAProxy and the traffic follow, that
// the files on disk follow, and that a later reload keeps the settings.
func TestRuntimeServerChanges(t *testing.T) {
	n := newNode(t)
	addrA, addrB := haproxytest.Backend(t, "A"), haproxytest.Backend(t, "B")
	pool := func(weightA, weightB int, maintB bool) map[string]string {
		return haproxytest.Pool(n.Port,
			haproxytest.PoolServer{Name: "s1", Addr: addrA, Weight: weightA},
			haproxytest.PoolServer{Name: "s2", Addr: addrB, Weight: weightB, Maint: maintB})
	}
	n.applyFiles(t, 1, pool(1, 1, false), client.StateApplied)
	haproxytest.WaitFor(t, n.URL, "A", 5*time.Second)
	requireAnswers(t, n.URL, "A", "B")
	first := n.showProc(t)

	r := n.applyFiles(t, 2, pool(0, 1, false), client.StateApplied)
	if r.Message != "applied at runtime without reload: 1 server change(s)" {
		t.Errorf("message = %q", r.Message)
	}
	requireSameWorker(t, n, first)
	requireServer(t, n, "s1", serverState{Weight: 0, Maint: false})
	requireAnswers(t, n.URL, "B")
	requireLive(t, n, pool(0, 1, false), 2)

	r = n.applyFiles(t, 3, pool(1, 1, true), client.StateApplied)
	if r.Message != "applied at runtime without reload: 2 server change(s)" {
		t.Errorf("message = %q", r.Message)
	}
	requireSameWorker(t, n, first)
	requireServer(t, n, "s1", serverState{Weight: 1, Maint: false})
	requireServer(t, n, "s2", serverState{Weight: 1, Maint: true})
	requireAnswers(t, n.URL, "A")
	requireLive(t, n, pool(1, 1, true), 3)

	// A reload loads the swapped files, which carry the same settings; the
	// server state file it loads leaves these servers, which have no health
	// check, to the configuration.
	if err := n.Manager.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := n.showProc(t); len(after.NewWorkers(first)) == 0 {
		t.Fatalf("the reload forked no new worker: %+v", after)
	}
	requireServer(t, n, "s2", serverState{Weight: 1, Maint: true})
	requireAnswers(t, n.URL, "A")
	saved, err := os.ReadFile(filepath.Join(n.Manager.RunDir, haproxy.ServerStateFile))
	if err != nil || !strings.HasPrefix(string(saved), "1\n") || strings.Contains(string(saved), " pool-web ") {
		t.Errorf("server-state = %q (%v), want a state file without unchecked servers", saved, err)
	}
}

// TestRuntimeFallback: when HAProxy refuses a runtime command (here a
// servers.json naming a server the configuration lacks), the revision is
// checked and reloaded instead, and the report says why.
func TestRuntimeFallback(t *testing.T) {
	n := newNode(t)
	s1 := haproxytest.PoolServer{Name: "s1", Addr: haproxytest.Backend(t, "A"), Weight: 1}
	ghost := haproxytest.PoolServer{Name: "ghost", Addr: "127.0.0.1:1", Weight: 1}
	withGhost := func(weight int) map[string]string {
		g := ghost
		g.Weight = weight
		files := haproxytest.Pool(n.Port, s1)
		files[bundle.ServersFile] = haproxytest.Pool(n.Port, s1, g)[bundle.ServersFile]
		return files
	}
	n.applyFiles(t, 1, withGhost(1), client.StateApplied)
	before := n.showProc(t)
	r := n.applyFiles(t, 2, withGhost(2), client.StateApplied)
	if !strings.Contains(r.Message, "reloaded instead") || !strings.Contains(r.Message, "No such server") {
		t.Errorf("message should say the runtime update failed and why:\n%s", r.Message)
	}
	if after := n.showProc(t); after.Reloads != before.Reloads+1 {
		t.Errorf("reloads %d -> %d, want one reload", before.Reloads, after.Reloads)
	}
	requireLive(t, n, withGhost(2), 2)
	haproxytest.WaitFor(t, n.URL, "A", 5*time.Second)
}

// requireLive checks the live files and revision.
func requireLive(t *testing.T, n *node, want map[string]string, wantRev int64) {
	t.Helper()
	live, rev := n.live(t)
	if diff := cmp.Diff(want, live); diff != "" || rev != wantRev {
		t.Errorf("live set at revision %d, want %d; files (-want +got):\n%s", rev, wantRev, diff)
	}
}

// requireModes checks the permissions under dir (following the live link).
func requireModes(t *testing.T, dir string, want map[string]os.FileMode) {
	t.Helper()
	got := map[string]os.FileMode{}
	for name := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fi.Mode().Perm()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

// requireSameWorker checks that no reload happened since before.
func requireSameWorker(t *testing.T, n *node, before haproxy.ProcTable) {
	t.Helper()
	after := n.showProc(t)
	if after.Reloads != before.Reloads || !cmp.Equal(after.Workers, before.Workers) {
		t.Errorf("haproxy reloaded: reloads %d -> %d, workers %v -> %v", before.Reloads, after.Reloads, before.Workers, after.Workers)
	}
}

// requireAnswers sends requests on new connections and requires that the
// answers are exactly the set want (each seen, nothing else).
func requireAnswers(t *testing.T, url string, want ...string) {
	t.Helper()
	seen := map[string]int{}
	for range 20 {
		got, err := haproxytest.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		seen[got]++
	}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no request answered %q: %v", w, seen)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("answers %v, want only %v", seen, want)
	}
}

// serverState is what the current worker reports for a server.
type serverState struct {
	Weight int
	Maint  bool
}

// poolWebServers returns the current worker's "show servers state pool-web",
// one {column: value} per server name, and the raw answer.
func poolWebServers(t *testing.T, n *node) (map[string]map[string]string, string) {
	t.Helper()
	out, err := n.Manager.CLI().Worker(context.Background(), "show servers state pool-web")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		t.Fatalf("show servers state: %q", out)
	}
	columns := strings.Fields(strings.TrimPrefix(lines[1], "#"))
	servers := map[string]map[string]string{}
	for _, line := range lines[2:] {
		row := map[string]string{}
		for i, value := range strings.Fields(line) {
			if i < len(columns) {
				row[columns[i]] = value
			}
		}
		if row["srv_name"] != "" {
			servers[row["srv_name"]] = row
		}
	}
	return servers, out
}

// requireServer checks server in pool-web through "show servers state",
// whose srv_admin_state has bit 0x01 (forced maintenance) set for maint.
func requireServer(t *testing.T, n *node, server string, want serverState) {
	t.Helper()
	servers, out := poolWebServers(t, n)
	row, ok := servers[server]
	if !ok {
		t.Errorf("server %s not in show servers state:\n%s", server, out)
		return
	}
	admin, _ := strconv.Atoi(row["srv_admin_state"])
	weight, _ := strconv.Atoi(row["srv_uweight"])
	if got := (serverState{Weight: weight, Maint: admin&1 != 0}); got != want {
		t.Errorf("server %s: %+v, want %+v (%v)", server, got, want, row)
	}
}

// TestUpgradeFromSingleFile: an HAProxy started by the previous agent, from
// DIR/haproxy.cfg, keeps serving when the new agent converts the state
// directory, and takes the next revision on reload.
func TestUpgradeFromSingleFile(t *testing.T) {
	bin := haproxytest.Binary(t)
	dir := t.TempDir()
	port := haproxytest.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	cfgA := haproxytest.Config(haproxytest.Backend(t, "A"), port)
	writeFile(t, filepath.Join(dir, bundle.MainFile), cfgA)
	writeFile(t, filepath.Join(dir, "state.json"), `{"revision":1,"files":{"haproxy.cfg":"`+apply.Digest(cfgA)+`"}}`)
	old := haproxy.New(bin, nil, dir, filepath.Join(dir, "run")) // -f DIR/haproxy.cfg, as before
	t.Cleanup(func() {
		if err := old.Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := old.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	haproxytest.WaitFor(t, url, "A", 5*time.Second)

	store := apply.Store{Dir: dir}
	if err := store.Init(); err != nil {
		t.Fatal(err)
	}
	m := haproxy.New(bin, nil, store.LiveDir(), store.RunDir())
	n := &node{&haproxytest.Node{Manager: m, Applier: &apply.Applier{Store: store, HAProxy: m}, URL: url, Port: port}}
	if err := n.Applier.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := n.showProc(t)
	n.apply(t, 2, haproxytest.Config(haproxytest.Backend(t, "B"), port), client.StateApplied)
	haproxytest.WaitFor(t, url, "B", 5*time.Second)
	if after := n.showProc(t); after.MasterPID != before.MasterPID {
		t.Errorf("the master changed (%d -> %d): want the old one reloaded", before.MasterPID, after.MasterPID)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
