package keepalived

// The tests in this file drive the real keepalived against the kernel's
// IPVS and nftables, which only the QEMU guest tier has
// (tests/vm/guest/test_agent_keepalived.sh sets FULCRUM_VM_GUEST=1):
//
//	guest root namespace: the test, the Applier, the ipvs Reconciler
//	      |  ip netns exec fk-lb-<pid> (ExecPrefix), /run/netns/fk-lb-<pid> (netlink)
//	      v
//	+-------------------------------------------------------------------+
//	| fk-lb-<pid>: lo up; dummy0 10.88.0.1/24, 10.88.0.2/24, 10.88.0.3/24 |
//	|   rs1: busybox httpd 10.88.0.2:8080                                 |
//	|   rs2: busybox httpd 10.88.0.3:8080                                 |
//	|   keepalived, TCP_CHECK of each real server every second:           |
//	|     VS TCP 10.88.0.10:80  lb_algo wlc, ipvs.json wants sed          |
//	|     VS TCP 10.88.0.10:81  lb_algo wlc, ipvs.json wants dllc (absent)|
//	|     VS FWM 7              lb_algo wlc, ipvs.json wants wlc          |
//	|   nft table inet fulcrum: 10.88.0.10 tcp dport 9000-90x9 -> mark 7  |
//	+-------------------------------------------------------------------+

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/ipvs"
	"fulcrum/agents/internal/status"
	"fulcrum/agents/internal/testlog"
)

// guestOnly skips the test outside the QEMU guest, saying why; the guest
// script fails when anything was skipped.
func guestOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("FULCRUM_VM_GUEST") != "1" {
		t.Skip("needs IPVS, nftables and root: runs in the QEMU guest tier " +
			"(tests/vm/run.sh agent_keepalived, which sets FULCRUM_VM_GUEST=1)")
	}
}

// lab is the namespace of the diagram above with its real servers.
type lab struct {
	ns      string
	prefix  []string
	servers map[string]*exec.Cmd // address -> its httpd
}

func newLab(t *testing.T) *lab {
	t.Helper()
	l := &lab{ns: fmt.Sprintf("fk-lb-%d", os.Getpid()), servers: map[string]*exec.Cmd{}}
	l.prefix = []string{"ip", "netns", "exec", l.ns}
	sh(t, "modprobe", "ip_vs")
	sh(t, "ip", "netns", "add", l.ns)
	t.Cleanup(func() {
		for addr := range l.servers {
			l.stopServer(addr)
		}
		_ = exec.Command("ip", "netns", "del", l.ns).Run()
	})
	in := func(args ...string) { sh(t, append([]string{"ip", "-n", l.ns}, args...)...) }
	in("link", "set", "lo", "up")
	in("link", "add", "dummy0", "type", "dummy")
	in("link", "set", "dummy0", "up")
	for _, a := range []string{"10.88.0.1/24", "10.88.0.2/24", "10.88.0.3/24"} {
		in("addr", "add", a, "dev", "dummy0")
	}
	for _, addr := range []string{"10.88.0.2", "10.88.0.3"} {
		l.startServer(t, addr)
	}
	return l
}

// startServer runs busybox httpd on addr:8080 in the namespace.
func (l *lab) startServer(t *testing.T, addr string) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", l.ns, "busybox", "httpd", "-f", "-p", addr+":8080", "-h", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l.servers[addr] = cmd
}

func (l *lab) stopServer(addr string) {
	if cmd := l.servers[addr]; cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		delete(l.servers, addr)
	}
}

// run runs a command in the namespace and returns its output.
func (l *lab) run(args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", l.ns}, args...)...).CombinedOutput()
	return string(out), err
}

// ipvsTable is "ipvsadm -Ln" in the namespace, with runs of blanks
// squeezed, so that tests match "TCP 10.88.0.10:80 sed".
func (l *lab) ipvsTable(t *testing.T) string {
	t.Helper()
	out, err := l.run("ipvsadm", "-Ln")
	if err != nil {
		t.Fatalf("ipvsadm -Ln: %v\n%s", err, out)
	}
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(out, " ")
}

// service returns the lines of one virtual service in the table: its own
// line and its real servers'.
func service(table, head string) string {
	var lines []string
	in := false
	for _, line := range strings.Split(table, "\n") {
		switch {
		case strings.HasPrefix(line, head+" "):
			in = true
		case !strings.HasPrefix(line, " ->"):
			in = false
		}
		if in {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return strings.Join(lines, "\n")
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
	}
	t.Fatalf("%s: not within %s; last state:\n%s", what, timeout, last)
}

// noHAProxy stands in for HAProxy, whose part every bundle has.
type noHAProxy struct{ running bool }

func (h *noHAProxy) Check(context.Context, string) error { return nil }
func (h *noHAProxy) Running(context.Context) bool        { return h.running }
func (h *noHAProxy) Start(context.Context) error         { h.running = true; return nil }
func (h *noHAProxy) Reload(context.Context) error        { return nil }
func (h *noHAProxy) Stop(context.Context) error          { h.running = false; return nil }
func (h *noHAProxy) SetServers(context.Context, []bundle.ServerChange) error {
	return nil
}

// realServer renders a real_server block with a TCP check every second.
func realServer(addr string) string {
	return fmt.Sprintf(`    real_server %s 8080 {
        weight 1
        TCP_CHECK {
            connect_timeout 1
            retry 1
            delay_before_retry 1
        }
    }
`, addr)
}

// keepalivedConf renders the three virtual servers, the first with
// keepalived's scheduler webSched and the given real servers.
func keepalivedConf(webSched string, webServers ...string) string {
	vs := func(head, sched string, servers ...string) string {
		s := head + " {\n    delay_loop 1\n    lb_algo " + sched + "\n    lb_kind NAT\n"
		if !strings.Contains(head, "fwmark") {
			// keepalived 2.3 refuses (config-test exit 1) a protocol on a
			// mark service.
			s += "    protocol TCP\n"
		}
		for _, rs := range servers {
			s += realServer(rs)
		}
		return s + "}\n"
	}
	return "global_defs {\n    router_id fulcrum-test\n}\n" +
		vs("virtual_server 10.88.0.10 80", webSched, webServers...) +
		vs("virtual_server 10.88.0.10 81", "wlc", "10.88.0.2") +
		vs("virtual_server fwmark 7", "wlc", "10.88.0.2")
}

// guestIPVSJSON is ipvs.json for keepalivedConf(webSched, ...).
func guestIPVSJSON(webSched string) string {
	return `{"services": [
	{"key": "tcp 10.88.0.10:80", "protocol": "tcp", "address": "10.88.0.10", "port": 80, "fwmark": 0,
	 "scheduler": "sed", "keepalived_scheduler": "` + webSched + `"},
	{"key": "tcp 10.88.0.10:81", "protocol": "tcp", "address": "10.88.0.10", "port": 81, "fwmark": 0,
	 "scheduler": "dllc", "keepalived_scheduler": "wlc"},
	{"key": "fwmark 7", "protocol": "tcp", "address": "", "port": 0, "fwmark": 7,
	 "scheduler": "wlc", "keepalived_scheduler": "wlc"}
]}`
}

// nftScript marks traffic to 10.88.0.10 on ports 9000 to last with 7. It
// owns its table: created if missing, then replaced in one transaction.
func nftScript(last int) string {
	rule := fmt.Sprintf("ip daddr 10.88.0.10 tcp dport 9000-%d meta mark set 7", last)
	return "table inet fulcrum {}\ndelete table inet fulcrum\ntable inet fulcrum {\n" +
		"    chain prerouting {\n        type filter hook prerouting priority mangle; policy accept;\n        " + rule + "\n    }\n" +
		"    chain output {\n        type route hook output priority mangle; policy accept;\n        " + rule + "\n    }\n}\n"
}

// layer4Bundle is a revision's files: the HAProxy stand-in plus the
// keepalived part.
func layer4Bundle(webSched, conf string, nftLast int) map[string]string {
	return map[string]string{
		bundle.MainFile:       "# no layer 7 in this test\n",
		bundle.KeepalivedFile: conf,
		bundle.IPVSFile:       guestIPVSJSON(webSched),
		bundle.NftFile:        nftScript(nftLast),
	}
}

// TestGuestKeepalivedIPVS applies revisions through the Applier to the real
// keepalived in a namespace, with the scheduler reconcile running as in the
// agent, and checks the kernel's IPVS table and nftables after each.
func TestGuestKeepalivedIPVS(t *testing.T) {
	guestOnly(t)
	l := newLab(t)
	var logs testlog.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := apply.Store{Dir: t.TempDir()}
	if err := store.Init(); err != nil {
		t.Fatal(err)
	}
	kernel := &ipvs.Netlink{NetNS: "/run/netns/" + l.ns}
	t.Cleanup(func() { _ = kernel.Close() })
	rec := &ipvs.Reconciler{Kernel: kernel, Wanted: ipvs.FileWanted(filepath.Join(store.LiveDir(), bundle.IPVSFile)), Logger: logger}
	m := New(binary(t), "nft", l.prefix, store.LiveDir(), store.RunDir())
	m.LogFile, m.Logger, m.AfterLoad = filepath.Join(t.TempDir(), "keepalived.log"), logger, rec.Reconcile
	t.Cleanup(func() {
		_ = m.Stop(context.Background())
		if t.Failed() || testing.Verbose() {
			klog, _ := os.ReadFile(m.LogFile)
			t.Logf("agent log:\n%s\nkeepalived log:\n%s", logs.String(), klog)
		}
	})
	applier := &apply.Applier{Store: store, HAProxy: &noHAProxy{}, Keepalived: m, Logger: logger}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rec.Run(ctx, time.Second) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	applyOK := func(rev int64, files map[string]string) client.Report {
		t.Helper()
		r := applier.Apply(context.Background(), &client.Bundle{Revision: rev, Node: "lb1", Files: files})
		if r.State != client.StateApplied {
			t.Fatalf("revision %d: %s: %s", rev, r.State, r.Message)
		}
		t.Logf("revision %d: %s", rev, r.Message)
		return r.Report
	}
	web := func(table string) string { return service(table, "TCP 10.88.0.10:80") }

	// Revision 1: keepalived starts from the bundle and creates the
	// services; the reconcile puts sed on :80, and dllc, which the kernel
	// does not have, leaves wlc on :81 with the reason in the status.
	applyOK(1, layer4Bundle("wlc", keepalivedConf("wlc", "10.88.0.2"), 9009))
	eventually(t, 20*time.Second, "services created, sed on :80", func() (bool, string) {
		table := l.ipvsTable(t)
		return strings.Contains(table, "TCP 10.88.0.10:80 sed") && strings.Contains(table, "TCP 10.88.0.10:81 wlc") &&
			strings.Contains(table, "FWM 7 wlc") && strings.Contains(web(table), "-> 10.88.0.2:8080"), table
	})
	eventually(t, 5*time.Second, "status of the dllc fallback", func() (bool, string) {
		for _, s := range rec.Statuses() {
			if s.Key == "tcp 10.88.0.10:81" {
				return s.Wanted == "dllc" && s.InForce == "wlc" &&
					strings.Contains(s.Message, "kernel refused scheduler dllc: no such scheduler"), fmt.Sprintf("%+v", s)
			}
		}
		return false, fmt.Sprintf("%+v", rec.Statuses())
	})
	want := []ipvs.Status{
		{Key: "tcp 10.88.0.10:80", Wanted: "sed", InForce: "sed"},
		{Key: "tcp 10.88.0.10:81", Wanted: "dllc", InForce: "wlc",
			Message: "kernel refused scheduler dllc: no such scheduler (the kernel found no module ip_vs_dllc); wlc stays in force"},
		{Key: "fwmark 7", Wanted: "wlc", InForce: "wlc"},
	}
	if got := rec.Statuses(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses = %+v\nwant %+v", got, want)
	}
	if n := strings.Count(logs.String(), "kernel refused scheduler dllc"); n != 1 {
		t.Errorf("the dllc refusal was logged %d times, want once", n)
	}
	nft, err := l.run("nft", "list", "table", "inet", "fulcrum")
	if err != nil || !strings.Contains(nft, "tcp dport 9000-9009 meta mark set 0x00000007") {
		t.Errorf("nft list table inet fulcrum (%v):\n%s\nwant the mark rule for 9000-9009", err, nft)
	}
	networks, err := status.IPAddr{ExecPrefix: l.prefix}.Networks(context.Background())
	if err != nil || strings.Join(networks, " ") != "10.88.0.1/24 10.88.0.2/24 10.88.0.3/24" {
		t.Errorf("networks in the namespace = %v (%v), want the three dummy0 addresses", networks, err)
	}
	pid := m.ours(m.PIDFile())

	// Revision 2: a second real server, a wider mark range, and
	// keepalived's scheduler for :80 now rr, so that keepalived really
	// edits the service when it reloads (it leaves an unchanged one
	// alone). keepalived reloads on SIGHUP (same process); the reconcile
	// puts sed back.
	rev2 := layer4Bundle("rr", keepalivedConf("rr", "10.88.0.2", "10.88.0.3"), 9019)
	r := applyOK(2, rev2)
	if !strings.Contains(r.Message, "keepalived.conf") {
		t.Errorf("report %q does not name keepalived.conf", r.Message)
	}
	if got := m.ours(m.PIDFile()); got != pid {
		t.Errorf("keepalived pid %d after the reload, want %d", got, pid)
	}
	eventually(t, 20*time.Second, "second real server, still sed", func() (bool, string) {
		s := web(l.ipvsTable(t))
		return strings.Contains(s, "-> 10.88.0.3:8080") && strings.HasPrefix(s, "TCP 10.88.0.10:80 sed"), s
	})
	holdsSed(t, l, "after the reload")
	if nft, _ := l.run("nft", "list", "table", "inet", "fulcrum"); !strings.Contains(nft, "9000-9019") {
		t.Errorf("nft table not updated before the reload:\n%s", nft)
	}
	if !strings.Contains(logs.String(), `msg="ipvs: scheduler set" service="tcp 10.88.0.10:80" id="TCP 10.88.0.10:80" scheduler=sed was=rr`) {
		t.Error("keepalived's reload did not put rr in force, or the reconcile did not replace it")
	}

	// rs1 dies: keepalived's health check removes it; the scheduler stays.
	l.stopServer("10.88.0.2")
	eventually(t, 30*time.Second, "rs1 removed by the health check", func() (bool, string) {
		s := web(l.ipvsTable(t))
		return !strings.Contains(s, "-> 10.88.0.2:8080") && strings.Contains(s, "-> 10.88.0.3:8080"), s
	})
	holdsSed(t, l, "after the health check removed rs1")

	// Revision 3: keepalived refuses the configuration: not made live,
	// keepalived untouched, the services stay.
	bad := layer4Bundle("rr", strings.Replace(keepalivedConf("rr", "10.88.0.3"), "delay_loop 1", "bogus_keyword 1", 1), 9019)
	r = applier.Apply(context.Background(), &client.Bundle{Revision: 3, Node: "lb1", Files: bad}).Report
	if r.State != client.StateFailed || !strings.Contains(r.Message, "Unknown keyword 'bogus_keyword'") {
		t.Errorf("revision 3 = %s: %q; want failed with keepalived's complaint", r.State, r.Message)
	}
	if rev, _ := store.Revision(); rev != 2 {
		t.Errorf("live revision %d after the refusal, want 2", rev)
	}
	if live, _ := store.Live(); live[bundle.KeepalivedFile] != rev2[bundle.KeepalivedFile] {
		t.Error("the refused keepalived.conf went live")
	}
	if got := m.ours(m.PIDFile()); got != pid {
		t.Errorf("keepalived pid %d after the refusal, want %d", got, pid)
	}
	holdsSed(t, l, "after the refused revision")

	// Revision 4: no layer-4 services any more: keepalived stops (removing
	// its services), the nftables table goes.
	applyOK(4, map[string]string{bundle.MainFile: "# no layer 7 in this test\n"})
	if m.Running(context.Background()) {
		t.Error("keepalived still running without keepalived.conf")
	}
	eventually(t, 10*time.Second, "services removed", func() (bool, string) {
		table := l.ipvsTable(t)
		return !strings.Contains(table, "10.88.0.10") && !strings.Contains(table, "FWM 7"), table
	})
	if out, err := l.run("nft", "list", "table", "inet", "fulcrum"); err == nil {
		t.Errorf("table inet fulcrum still there:\n%s", out)
	}
	rec.Reconcile(context.Background())
	if got := rec.Statuses(); len(got) != 0 {
		t.Errorf("statuses without ipvs.json = %+v, want none", got)
	}
}

// holdsSed checks, for three seconds, that :80 keeps the sed scheduler.
func holdsSed(t *testing.T, l *lab, when string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if s := service(l.ipvsTable(t), "TCP 10.88.0.10:80"); !strings.HasPrefix(s, "TCP 10.88.0.10:80 sed") {
			t.Fatalf("%s: :80 lost sed:\n%s", when, s)
		}
	}
}

// TestGuestCheckNft: nft -c accepts the script and refuses a broken one,
// without touching the namespace's ruleset.
func TestGuestCheckNft(t *testing.T) {
	guestOnly(t)
	l := newLab(t)
	m := New(binary(t), "nft", l.prefix, "", t.TempDir())
	good := map[string]string{bundle.KeepalivedFile: virtualServer, bundle.NftFile: nftScript(9009)}
	if err := m.Check(context.Background(), writeSet(t, t.TempDir(), good)); err != nil {
		t.Fatalf("good script refused: %v", err)
	}
	bad := map[string]string{bundle.KeepalivedFile: virtualServer, bundle.NftFile: strings.Replace(nftScript(9009), "meta mark set", "meta mark sett", 1)}
	err := m.Check(context.Background(), writeSet(t, t.TempDir(), bad))
	if err == nil || !strings.HasPrefix(err.Error(), "nft rejected the configuration:") {
		t.Fatalf("broken script: %v, want nft's refusal", err)
	}
	if out, err := l.run("nft", "list", "table", "inet", "fulcrum"); err == nil {
		t.Errorf("the check created table inet fulcrum:\n%s", out)
	}
}
