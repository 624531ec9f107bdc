package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/testlog"
)

// TestGuestDLLCFeedback is the DLLC loop end to end on a real kernel:
// keepalived from a compiler-rendered bundle creates the IPVS service, the
// agent puts the ip_vs_dllc scheduler in force, reads both real servers'
// fulcrum-loadd (rs2 runs a CPU burner in its cgroup) and writes their loads
// into the module, which then sends most new connections to the idle rs1;
// a silent agent's load counts as the average; without the module, wlc with
// load-derived weights stands in. Only tests/vm/guest/test_dllc_feedback.sh
// runs it (FULCRUM_VM_GUEST=1), inside the director's namespace, once it has
// built the namespaces, servers, loads and the module; the API is a fake,
// the only part of the stack that cannot run in the guest.
func TestGuestDLLCFeedback(t *testing.T) {
	if os.Getenv("FULCRUM_VM_GUEST") != "1" {
		t.Skip("runs in the QEMU guest only (tests/vm/guest/test_dllc_feedback.sh)")
	}
	env := guestEnv(t, "FULCRUM_DLLC_BUNDLE", "FULCRUM_DLLC_CLIENT_NS", "FULCRUM_DLLC_RS2_LOADD_PID", "FULCRUM_DLLC_MODULE")
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	api.publishFiles(1, bundleFiles(t, env["FULCRUM_DLLC_BUNDLE"]))
	dir := t.TempDir()
	args := []string{
		"--api", srv.URL, "--token-file", writeToken(t, token), "--state-dir", dir, "--wait", "1s",
		"--keepalived-log", filepath.Join(dir, "keepalived.log"), "--log-level", "debug",
	}
	ctx, stop := context.WithCancel(context.Background())
	var logs testlog.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, args, &logs) }()
	t.Cleanup(func() {
		stop()
		<-done
		_ = haproxyIn("haproxy", dir).Stop(context.Background())
		_ = exec.Command("pkill", "-TERM", "-f", "keepalived --dont-fork").Run()
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	})

	// 1. The module in force, both loads in it, rs2 (burning) above rs1.
	st := awaitMembers(t, api, "both loads fed into ip_vs_dllc", func(m map[string]client.MemberStatus) bool {
		return m["rs1"].Feed == "ip_vs_dllc" && m["rs2"].Feed == "ip_vs_dllc" && known(m["rs1"]) && known(m["rs2"]) &&
			*m["rs2"].LoadMilli > *m["rs1"].LoadMilli+300
	})
	t.Logf("loads: rs1 %d, rs2 %d", *st["rs1"].LoadMilli, *st["rs2"].LoadMilli)
	t.Logf("%s:\n%s", procFile, readFile(t, procFile))
	rs1, rs2 := spread(t, env["FULCRUM_DLLC_CLIENT_NS"], 40)
	t.Logf("dllc, rs2 burning: rs1 %d, rs2 %d of 40 new connections", rs1, rs2)
	// Plain least connection splits them 20/20, exactly: it counts the
	// inactive connections too, and both start level. The loads' ratio (about
	// 7:1) gives rs1 about 35 on an idle host; serving them raises rs1's own
	// load, the more so the busier the host: 25 with the host at load 9. The
	// bound is four beyond anything least connection can give.
	if rs1 < 24 {
		t.Errorf("the idle rs1 got %d of 40 new connections, want at least 24", rs1)
	}

	// 2. Without the module (hidden, then unloaded once keepalived's wlc is
	// back), wlc with load-derived weights stands in; with it back, dllc.
	restore := hideModule(t, env["FULCRUM_DLLC_MODULE"])
	st = awaitMembers(t, api, "wlc weights standing in", func(m map[string]client.MemberStatus) bool {
		return m["rs1"].Feed == "wlc weights" && m["rs2"].Feed == "wlc weights" &&
			m["rs1"].Weight != nil && m["rs2"].Weight != nil && *m["rs1"].Weight > 4**m["rs2"].Weight
	})
	t.Logf("wlc fallback weights: rs1 %d, rs2 %d\n%s", *st["rs1"].Weight, *st["rs2"].Weight, ipvsadm(t))
	rs1, rs2 = spread(t, env["FULCRUM_DLLC_CLIENT_NS"], 40)
	t.Logf("wlc fallback, rs2 burning: rs1 %d, rs2 %d of 40\n%s", rs1, rs2, ipvsadm(t))
	// rs1 already has many more (inactive) connections from step 1: wlc with
	// the configured weights (1:1) would give it about 7 of the 40. The
	// weights follow the loads while the 40 are served, and serving them
	// raises rs1's own: it got 30 of 40 with the host idle (weights 233:17
	// at the start), 23 with the host at load 8 (104:16). The bound is the
	// majority, three times what the configured weights would give.
	if rs1 <= rs2 {
		t.Errorf("the idle rs1 got %d of 40 new connections under the fallback, want more than rs2's %d", rs1, rs2)
	}
	restore()
	awaitMembers(t, api, "ip_vs_dllc back, configured weights restored", func(m map[string]client.MemberStatus) bool {
		return m["rs1"].Feed == "ip_vs_dllc" && m["rs1"].Weight != nil && *m["rs1"].Weight == 1 &&
			m["rs2"].Weight != nil && *m["rs2"].Weight == 1
	})

	// 3. rs2's agent goes silent: once its load is stale the module counts
	// it as the average of the fresh ones (rs1's alone), so both are equal.
	pid, _ := strconv.Atoi(env["FULCRUM_DLLC_RS2_LOADD_PID"])
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop rs2's fulcrum-loadd: %v", err)
	}
	awaitMembers(t, api, "rs2 reported without a fresh load", func(m map[string]client.MemberStatus) bool {
		return strings.Contains(m["rs2"].Message, "no fresh load")
	})
	awaitProc(t, "rs2's effective load equal to rs1's", func(eff map[string]string) bool {
		return eff["10.77.3.2:80"] != "" && eff["10.77.3.2:80"] == eff["10.77.2.2:80"]
	})
	// With equal loads DLLC is weighted least connection, and IPVS counts the
	// connections that closed a moment ago too (inactive, for two minutes):
	// rs2, which the steps above kept from new connections, has far fewer,
	// so it takes most now. Had its real load (about 6 times rs1's) still
	// counted, it would take about 8 of the 40.
	table := readFile(t, procFile)
	over := overheads(table)
	t.Logf("%s before:\n%s", procFile, table)
	if over["10.77.3.2:80"] >= over["10.77.2.2:80"] {
		t.Fatalf("rs2 has no fewer connections than rs1 (%v): this step proves nothing", over)
	}
	rs1, rs2 = spread(t, env["FULCRUM_DLLC_CLIENT_NS"], 40)
	t.Logf("dllc, rs2's load unknown (counted as the average): rs1 %d, rs2 %d of 40", rs1, rs2)
	if rs2 < 25 {
		t.Errorf("rs2, with the fewer connections and its load unknown, got %d of 40, want at least 25", rs2)
	}
}

// overheads reads the module's table into destination -> connection
// overhead (active × 256 + inactive).
func overheads(table string) map[string]int {
	over := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && !strings.HasPrefix(f[0], "#") {
			over[f[2]], _ = strconv.Atoi(f[6])
		}
	}
	return over
}

// hideModule makes the ip_vs_dllc module unavailable: its file moved away
// (modules.dep still names it, so modprobe fails to find the file: no
// depmod, which takes most of a minute over the kernel's 4,000 modules
// under TCG), the service put back on keepalived's wlc and the module
// unloaded (again and again, since the agent keeps asking for dllc, which
// loads it while the file is still there). It returns the function that
// puts the file back; the test's cleanup puts it back too, so a failed run
// leaves the module where the next guest test expects it.
func hideModule(t *testing.T, module string) func() {
	t.Helper()
	hidden := filepath.Join(t.TempDir(), filepath.Base(module))
	mustRun(t, "mv", module, hidden)
	restore := func() {
		if _, err := os.Stat(hidden); err == nil {
			mustRun(t, "mv", hidden, module)
		}
	}
	t.Cleanup(restore)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_ = exec.Command("ipvsadm", "-E", "-t", "10.77.1.100:80", "-s", "wlc").Run()
		if exec.Command("rmmod", "ip_vs_dllc").Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("could not unload ip_vs_dllc within 30s")
		}
	}
	return restore
}

func mustRun(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

func ipvsadm(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ipvsadm", "-Ln").CombinedOutput()
	if err != nil {
		t.Fatalf("ipvsadm -Ln: %v: %s", err, out)
	}
	return string(out)
}

// known reports whether m carries a fresh load.
func known(m client.MemberStatus) bool {
	return m.LoadMilli != nil && !strings.Contains(m.Message, "no fresh load")
}

const procFile = "/proc/net/ip_vs_dllc"

func guestEnv(t *testing.T, names ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, name := range names {
		if env[name] = os.Getenv(name); env[name] == "" {
			t.Fatalf("%s is not set (the guest script sets it)", name)
		}
	}
	return env
}

// bundleFiles reads a rendered case (tests/vm/render-l4.py) as bundle files.
func bundleFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = string(text)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// awaitMembers waits until the agent's latest status satisfies ok, and
// returns its members by name.
func awaitMembers(t *testing.T, api *fakeAPI, what string, ok func(map[string]client.MemberStatus) bool) map[string]client.MemberStatus {
	t.Helper()
	var last map[string]client.MemberStatus
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		api.mu.Lock()
		var latest *client.NodeStatus
		if n := len(api.statuses); n > 0 {
			latest = &api.statuses[n-1]
		}
		api.mu.Unlock()
		if latest == nil {
			continue
		}
		last = map[string]client.MemberStatus{}
		for _, m := range latest.Members {
			last[m.Member] = m
		}
		if ok(last) {
			return last
		}
	}
	t.Fatalf("%s: not within 60s; last members: %s", what, describeMembers(last))
	return nil
}

func describeMembers(m map[string]client.MemberStatus) string {
	var b strings.Builder
	for name, s := range m {
		load := "nil"
		if s.LoadMilli != nil {
			load = strconv.FormatInt(*s.LoadMilli, 10)
		}
		fmt.Fprintf(&b, "%s: load %s feed %q message %q; ", name, load, s.Feed, s.Message)
	}
	return b.String()
}

// awaitProc waits until the module's table (destination -> effective load)
// satisfies ok.
func awaitProc(t *testing.T, what string, ok func(map[string]string) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok(effectiveLoads(readFile(t, procFile))) {
			return
		}
	}
	t.Fatalf("%s: not within 30s; %s:\n%s", what, procFile, readFile(t, procFile))
}

// effectiveLoads reads "service destination load age_ms effective
// overhead weight" lines into destination -> effective.
func effectiveLoads(table string) map[string]string {
	eff := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && !strings.HasPrefix(f[0], "#") {
			eff[f[2]] = f[5]
		}
	}
	return eff
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// spread opens n new connections from the client namespace (one request
// each) and counts which real server answered.
func spread(t *testing.T, clientNS string, n int) (rs1, rs2 int) {
	t.Helper()
	for i := 0; i < n; i++ {
		out, err := exec.Command("ip", "netns", "exec", clientNS,
			"curl", "-s", "--max-time", "5", "http://10.77.1.100/").Output()
		switch strings.TrimSpace(string(out)) {
		case "rs1":
			rs1++
		case "rs2":
			rs2++
		default:
			t.Fatalf("request %d: answer %q (%v)", i, out, err)
		}
	}
	return rs1, rs2
}
