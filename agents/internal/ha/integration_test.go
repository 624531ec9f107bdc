package ha

// The tests in this file run the real keepalived in two network
// namespaces, each followed by a Watcher as the agent runs it:
//
//	+------------------------------+            +------------------------------+
//	| fha-a-<pid>                  |    veth    | fha-b-<pid>                  |
//	|   vA 10.77.1.3/24            |<---------->|   vB 10.77.1.4/24            |
//	|   keepalived: web, vrid 51,  |  VRRPv3    |   keepalived: web, vrid 51,  |
//	|   priority 150, advert 0.2s  |  unicast   |   priority 100, advert 0.2s  |
//	|   VIP 10.77.100.10/32 dev vA |            |   VIP 10.77.100.10/32 dev vB |
//	+------------------------------+            +------------------------------+
//	run dirs <tmp>/lbA, <tmp>/lbB: vrrp.fifo, standby, haproxy (the agent's)
//
// They need root (network namespaces) and keepalived; they skip without
// root or namespaces, and fail without keepalived.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/keepalived"
	"fulcrum/agents/internal/testlog"
)

const labVIP = "10.77.100.10/32"

// lbNode is one load balancer of the lab: a namespace, its keepalived and
// the agent's Watcher.
type lbNode struct {
	name, ns, dev, addr, peer string
	priority                  int
	prefix                    []string
	confDir, runDir           string
	ka                        *keepalived.Manager
	w                         *Watcher
	events                    *sink
	haproxy                   atomic.Bool
	logs                      *testlog.Buffer
	stop                      func()
}

// newLab makes the two namespaces and their Watchers (running), and
// starts neither keepalived.
func newLab(t *testing.T) (a, b *lbNode) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces with ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2) on PATH")
	}
	bin, err := exec.LookPath("keepalived")
	if err != nil {
		t.Fatal("keepalived is not on PATH; install it (make deps) to run the real-daemon tests")
	}
	root := t.TempDir()
	a = &lbNode{name: "lbA", ns: fmt.Sprintf("fha-a-%d", os.Getpid()), dev: "vA", addr: "10.77.1.3", peer: "10.77.1.4", priority: 150}
	b = &lbNode{name: "lbB", ns: fmt.Sprintf("fha-b-%d", os.Getpid()), dev: "vB", addr: "10.77.1.4", peer: "10.77.1.3", priority: 100}
	for _, n := range []*lbNode{a, b} {
		if out, err := exec.Command("ip", "netns", "add", n.ns).CombinedOutput(); err != nil {
			t.Skipf("ip netns add failed (no network namespaces here?): %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.ns).Run() })
	}
	run(t, "ip", "link", "add", "name", a.dev, "netns", a.ns, "type", "veth", "peer", "name", b.dev, "netns", b.ns)
	for _, n := range []*lbNode{a, b} {
		run(t, "ip", "-n", n.ns, "link", "set", "lo", "up")
		run(t, "ip", "-n", n.ns, "addr", "add", n.addr+"/24", "dev", n.dev)
		run(t, "ip", "-n", n.ns, "link", "set", n.dev, "up")
		n.start(t, bin, root)
	}
	return a, b
}

// start writes the node's keepalived set and runs its Watcher.
func (n *lbNode) start(t *testing.T, bin, root string) {
	t.Helper()
	dir := t.TempDir()
	n.prefix = []string{"ip", "netns", "exec", n.ns}
	n.confDir, n.runDir = filepath.Join(dir, "live"), filepath.Join(root, n.name)
	if err := os.MkdirAll(filepath.Join(n.confDir, bundle.KeepalivedDir), 0o700); err != nil {
		t.Fatal(err)
	}
	n.writeSet(t, true)
	n.logs = &testlog.Buffer{}
	logger := slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", n.name)
	n.ka = keepalived.New(bin, "", n.prefix, n.confDir, filepath.Join(dir, "state"))
	n.ka.LogFile, n.ka.Logger, n.ka.Settle = filepath.Join(dir, "keepalived.log"), logger, 200*time.Millisecond
	n.events = &sink{}
	n.haproxy.Store(true)
	n.w = &Watcher{
		ConfFile: filepath.Join(n.confDir, bundle.HAFile), RunRoot: root, Keepalived: n.ka,
		HAProxyRunning: n.haproxy.Load, Host: Commands{ExecPrefix: n.prefix}, Events: n.events, Logger: logger,
	}
	n.ka.BeforeLoad = n.w.Prepare
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.w.Run(ctx) }()
	var once sync.Once
	n.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(func() {
		_ = n.ka.Stop(context.Background())
		n.stop()
		if t.Failed() {
			klog, _ := os.ReadFile(n.ka.LogFile)
			t.Logf("%s agent log:\n%s\n%s keepalived log:\n%s", n.name, n.logs.String(), n.name, klog)
		}
	})
}

// keepalivedConf is the contract's keepalived.conf for the node, with or
// without its VRRP part. global_defs has script_user, when scripts wants
// it, before vrrp_notify_fifo unless late is set (the contract's order).
func (n *lbNode) keepalivedConf(vrrp bool, scripts, late bool) string {
	if !vrrp {
		return fmt.Sprintf("global_defs {\n    router_id %s\n}\n", n.name)
	}
	security := ""
	if scripts {
		security = "    enable_script_security\n    script_user root\n"
	}
	fifo := fmt.Sprintf("    vrrp_notify_fifo %s/vrrp.fifo\n", n.runDir)
	globals := security + fifo
	if late {
		globals = fifo + security
	}
	script, track := "", ""
	if scripts {
		script = "vrrp_script fulcrum_witness_web {\n    script \"/usr/bin/true\"\n    interval 1\n    timeout 2\n    fall 2\n    rise 2\n}\n\n"
		track = "    track_script {\n        fulcrum_witness_web\n    }\n"
	}
	return fmt.Sprintf(`global_defs {
    router_id %[1]s
%[2]s}

vrrp_track_file fulcrum_standby {
    file %[3]s/standby
    weight 0
}
vrrp_track_file fulcrum_haproxy {
    file %[3]s/haproxy
    weight 0
}

%[4]svrrp_instance web {
    state BACKUP
    interface %[5]s
    virtual_router_id 51
    version 3
    priority %[6]d
    advert_int 0.2
    unicast_src_ip %[7]s
    unicast_peer {
        %[8]s
    }
    virtual_ipaddress {
        %[9]s dev %[5]s
    }
    garp_master_delay 1
    garp_master_repeat 3
    garp_master_refresh 60
    track_file {
        fulcrum_standby
        fulcrum_haproxy
    }
%[10]s}
`, n.name, globals, n.runDir, script, n.dev, n.priority, n.addr, n.peer, labVIP, track)
}

// haJSON is the node's ha.json.
func (n *lbNode) haJSON() string {
	return fmt.Sprintf(`{"node": %q, "run_dir": %q, "fifo": "%[2]s/vrrp.fifo", "standby": false,
 "track_files": {"standby": "%[2]s/standby", "haproxy": "%[2]s/haproxy"},
 "groups": [{"name": "web", "vrid": 51, "interface": %q, "priority": %d, "advert_ms": 200,
  "vips": [%q], "peers": [%q], "witness": ""}]}`, n.name, n.runDir, n.dev, n.priority, labVIP, n.peer)
}

// writeSet writes the live keepalived.conf and ha.json; without VRRP the
// node has no ha.json.
func (n *lbNode) writeSet(t *testing.T, vrrp bool, opts ...bool) {
	t.Helper()
	scripts, late := len(opts) > 0 && opts[0], len(opts) > 1 && opts[1]
	write(t, filepath.Join(n.confDir, bundle.KeepalivedFile), n.keepalivedConf(vrrp, scripts, late))
	ha := filepath.Join(n.confDir, bundle.HAFile)
	if vrrp {
		write(t, ha, n.haJSON())
	} else if err := os.Remove(ha); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// startKeepalived checks the live set with keepalived --config-test in the
// namespace and starts keepalived.
func (n *lbNode) startKeepalived(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := n.ka.Check(ctx, n.confDir); err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	if err := n.ka.Start(ctx); err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
}

// hasVIP reports whether the VIP is on the node's interface.
func (n *lbNode) hasVIP(t *testing.T) bool {
	t.Helper()
	addrs, err := (Commands{ExecPrefix: n.prefix}).Addresses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range addrs[n.dev] {
		if p.String() == labVIP {
			return true
		}
	}
	return false
}

// state is the Watcher's state of group web.
func (n *lbNode) state() string {
	for _, s := range n.w.Statuses() {
		if s.Group == "web" {
			return s.State
		}
	}
	return ""
}

// lastEvent returns the node's last event so far.
func (n *lbNode) lastEvent() client.Event {
	n.events.mu.Lock()
	defer n.events.mu.Unlock()
	if len(n.events.events) == 0 {
		return client.Event{}
	}
	return n.events.events[len(n.events.events)-1]
}

// await polls cond every 10 ms until it holds, failing after timeout; it
// returns how long that took.
func await(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, timeout)
	return 0
}

// electA starts both keepalived and waits for A master, B backup, as the
// FIFOs tell the Watchers.
func electA(t *testing.T, a, b *lbNode) {
	t.Helper()
	a.startKeepalived(t)
	b.startKeepalived(t)
	await(t, 5*time.Second, "A master, B backup (FIFO)", func() bool { return a.state() == "master" && b.state() == "backup" })
	await(t, 2*time.Second, "VIP on A only", func() bool { return a.hasVIP(t) && !b.hasVIP(t) })
	if !a.w.FIFOHeld() || !b.w.FIFOHeld() {
		t.Error("a Watcher read the states off the interfaces, not the FIFO")
	}
}

// failover waits for B to hold the VIP and A not, returning how long B
// took.
func failover(t *testing.T, a, b *lbNode, timeout time.Duration, trigger string) time.Duration {
	t.Helper()
	took := await(t, timeout, "B takes the VIP after "+trigger, func() bool { return b.hasVIP(t) })
	t.Logf("%s: B had the VIP after %s", trigger, took.Round(time.Millisecond))
	await(t, 2*time.Second, "A without the VIP after "+trigger, func() bool { return !a.hasVIP(t) })
	await(t, 2*time.Second, "B master (FIFO) after "+trigger, func() bool { return b.state() == "master" })
	return took
}

// TestVRRPStandby: "1" in A's standby file (written in place) puts A in
// FAULT and B takes over within a second; "0" brings A back (it preempts).
func TestVRRPStandby(t *testing.T) {
	a, b := newLab(t)
	electA(t, a, b)
	write(t, filepath.Join(a.runDir, "standby"), "1\n")
	failover(t, a, b, time.Second, "standby")
	await(t, 2*time.Second, "A fault", func() bool { return a.state() == "fault" })
	if e := a.lastEvent(); e.OldState != "master" || e.NewState != "fault" || e.Reason != ReasonStandby || e.Priority != 150 {
		t.Errorf("A's last event %+v, want master -> fault, priority 150, %q", e, ReasonStandby)
	}
	write(t, filepath.Join(a.runDir, "standby"), "0\n")
	await(t, 5*time.Second, "A master again", func() bool { return a.state() == "master" && a.hasVIP(t) })
	await(t, 2*time.Second, "B backup again", func() bool { return b.state() == "backup" })
	if e := b.lastEvent(); e.Reason != ReasonHigherPeer {
		t.Errorf("B's last event %+v, want the reason %q", e, ReasonHigherPeer)
	}
}

// TestVRRPHAProxyDown: HAProxy stopping on A makes the Watcher write "1"
// to A's haproxy track file (by rename), and B takes over within a second.
func TestVRRPHAProxyDown(t *testing.T) {
	a, b := newLab(t)
	electA(t, a, b)
	a.haproxy.Store(false)
	failover(t, a, b, time.Second, "haproxy down")
	if got := readFile(t, filepath.Join(a.runDir, "haproxy")); got != "1\n" {
		t.Errorf("A's haproxy track file %q, want 1", got)
	}
	await(t, 2*time.Second, "A fault", func() bool { return a.state() == "fault" })
	if e := a.lastEvent(); e.NewState != "fault" || e.Reason != ReasonHAProxy {
		t.Errorf("A's last event %+v, want fault: %q", e, ReasonHAProxy)
	}
	a.haproxy.Store(true)
	await(t, 5*time.Second, "A master again", func() bool { return a.state() == "master" && a.hasVIP(t) })
}

// TestVRRPKeepalivedKilled: SIGKILL of A's keepalived (main process and
// VRRP child, as the OOM killer or a kill -9 of its group would) leaves
// the VIP on A; B takes over when A's adverts stop, and the Watcher
// removes the stale VIP from A.
func TestVRRPKeepalivedKilled(t *testing.T) {
	a, b := newLab(t)
	electA(t, a, b)
	pid, vrrp := a.ka.PID(), a.ka.VRRPPID()
	if pid == 0 || vrrp == 0 {
		t.Fatalf("keepalived pids %d, %d", pid, vrrp)
	}
	start := time.Now()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil { // its own session: pgid == pid
		t.Fatal(err)
	}
	var bTook, aTook time.Duration // from the kill
	await(t, 3*time.Second, "B takes the VIP and A's stale VIP goes after SIGKILL", func() bool {
		if bTook == 0 && b.hasVIP(t) {
			bTook = time.Since(start)
		}
		if aTook == 0 && !a.hasVIP(t) {
			aTook = time.Since(start)
		}
		return bTook > 0 && aTook > 0
	})
	t.Logf("SIGKILL: B had the VIP after %s; A's stale VIP was gone after %s",
		bTook.Round(time.Millisecond), aTook.Round(time.Millisecond))
	await(t, 2*time.Second, "A stopped", func() bool { return a.state() == "stopped" })
	e := a.lastEvent()
	if e.OldState != "master" || e.NewState != "stopped" || !strings.HasPrefix(e.Reason, ReasonGone) ||
		!strings.Contains(e.Reason, labVIP) {
		t.Errorf("A's last event %+v, want master -> stopped: %q with the VIP removed", e, ReasonGone)
	}
	await(t, 2*time.Second, "B master (FIFO)", func() bool { return b.state() == "master" })
}

// TestVRRPReload: a SIGHUP is enough for VRRP to appear in, and go from, a
// running keepalived (no restart), and the FIFO keeps working across
// reloads. With the contract's global_defs order (script_user after
// vrrp_notify_fifo), keepalived 2.2.7 stops writing to the FIFO after a
// reload; the Watcher must then still report the states, off the
// interfaces.
func TestVRRPReload(t *testing.T) {
	a, b := newLab(t)
	ctx := context.Background()
	a.writeSet(t, false)
	a.startKeepalived(t)
	pid := a.ka.PID()
	if a.ka.VRRPPID() != 0 {
		t.Fatal("a VRRP child without VRRP instances")
	}
	b.startKeepalived(t)

	reload := func(t *testing.T, vrrp bool, opts ...bool) {
		t.Helper()
		a.writeSet(t, vrrp, opts...)
		if err := a.ka.Check(ctx, a.confDir); err != nil {
			t.Fatal(err)
		}
		if err := a.ka.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		if a.ka.PID() != pid {
			t.Fatalf("keepalived restarted (pid %d, was %d), want a reload", a.ka.PID(), pid)
		}
	}
	// VRRP appears: keepalived starts its VRRP child at the SIGHUP.
	reload(t, true)
	await(t, 5*time.Second, "A master after the reload that added VRRP", func() bool { return a.state() == "master" && a.hasVIP(t) })
	if a.ka.VRRPPID() == 0 {
		t.Error("no VRRP child after the reload")
	}
	// VRRP goes: the instance is dropped, the VIP released, B takes over.
	reload(t, false)
	await(t, 3*time.Second, "B master after VRRP left A", func() bool { return b.hasVIP(t) && !a.hasVIP(t) })

	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("script_user after the fifo: %v", late), func(t *testing.T) {
			reload(t, true, true, late)
			await(t, 5*time.Second, "A master", func() bool { return a.state() == "master" && a.hasVIP(t) })
			reload(t, true, true, late)         // the reload that loses the FIFO, if any
			time.Sleep(2500 * time.Millisecond) // two slow polls: the Watcher decides about the FIFO
			t.Logf("after a reload: the VRRP child holds the FIFO: %v", a.w.FIFOHeld())
			write(t, filepath.Join(a.runDir, "standby"), "1\n")
			await(t, 3*time.Second, "A fault", func() bool { return a.state() == "fault" && !a.hasVIP(t) })
			if e := a.lastEvent(); e.NewState != "fault" || e.Reason != ReasonStandby {
				t.Errorf("A's last event %+v, want fault: %q", e, ReasonStandby)
			}
			if !late && !a.w.FIFOHeld() {
				t.Error("keepalived dropped the FIFO although script_user came first")
			}
			write(t, filepath.Join(a.runDir, "standby"), "0\n")
			await(t, 5*time.Second, "A master again", func() bool { return a.state() == "master" && a.hasVIP(t) })
		})
	}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
