package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/realserver"
)

// asCommandEnv makes the test binary behave as fulcrum-realserver, so the
// integration test runs the real command inside a network namespace with
// "ip netns exec" without building it first.
const asCommandEnv = "FULCRUM_REALSERVER_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, realserver.Linux{}))
	}
	os.Exit(m.Run())
}

// The sysctls add may change, as files under /proc/sys.
var watched = []string{
	"net/ipv4/conf/all/arp_ignore",
	"net/ipv4/conf/all/arp_announce",
	"net/ipv4/conf/all/rp_filter",
	"net/ipv4/conf/lo/arp_ignore",
	"net/ipv4/conf/lo/arp_announce",
}

// namespaces counts the namespaces made, for unique names.
var namespaces int

// netns is a fresh network namespace, deleted when the test ends.
type netns struct {
	t    *testing.T
	name string
	self string // this test binary
}

func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace with ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2) on PATH")
	}
	namespaces++
	ns := &netns{t: t, name: fmt.Sprintf("fl-rs-test-%d-%d", os.Getpid(), namespaces)}
	if out, err := exec.Command("ip", "netns", "add", ns.name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add failed (no network namespaces here?): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns.name).Run() })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ns.self = self
	return ns
}

// exec runs a command in the namespace and returns its output and status.
func (ns *netns) exec(name string, args ...string) (stdout, stderr string, code int) {
	ns.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.name, name}, args...)...)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		ns.t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// realserver runs the command under test in the namespace; it must exit
// with wantCode.
func (ns *netns) realserver(wantCode int, args ...string) (stdout, stderr string) {
	ns.t.Helper()
	stdout, stderr, code := ns.exec(ns.self, args...)
	ns.t.Logf("fulcrum-realserver %s -> %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	if code != wantCode {
		ns.t.Fatalf("fulcrum-realserver %v: exit status %d, want %d", args, code, wantCode)
	}
	return stdout, stderr
}

// sysctls reads the watched sysctls (and extra ones) inside the namespace.
func (ns *netns) sysctls(extra ...string) map[string]string {
	ns.t.Helper()
	names := append(append([]string{}, watched...), extra...)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = "/proc/sys/" + n
	}
	out, stderr, code := ns.exec("cat", paths...)
	if code != 0 {
		ns.t.Fatalf("cat %v: %s", paths, stderr)
	}
	return zip(names, strings.Fields(out))
}

// dev reports whether device name is up and its addresses as "ip -o addr"
// prints them (none if there is no such device).
func (ns *netns) dev(name string) (up bool, addrs []string) {
	ns.t.Helper()
	link, _, code := ns.exec("ip", "-o", "link", "show", "dev", name)
	if code != 0 {
		return false, nil
	}
	flags := link[strings.Index(link, "<")+1 : strings.Index(link, ">")]
	out, _, _ := ns.exec("ip", "-o", "addr", "show", "dev", name)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			addrs = append(addrs, f[3])
		}
	}
	return strings.Contains(","+flags+",", ",UP,"), addrs
}

func zip(names, values []string) map[string]string {
	m := map[string]string{}
	for i, n := range names {
		if i < len(values) {
			m[n] = values[i]
		}
	}
	return m
}

func hostSysctls(t *testing.T) map[string]string {
	t.Helper()
	values := make([]string, len(watched))
	for i, n := range watched {
		b, err := os.ReadFile("/proc/sys/" + n)
		if err != nil {
			t.Fatal(err)
		}
		values[i] = strings.TrimSpace(string(b))
	}
	return zip(watched, values)
}

// TestDirectRoutingInNetworkNamespace runs the real command against the
// kernel inside a fresh network namespace: the VIPs on lo, the ARP sysctls,
// the bookkeeping across two removes, and everything back as it was.
func TestDirectRoutingInNetworkNamespace(t *testing.T) {
	ns := newNetns(t)
	hostBefore := hostSysctls(t)
	state := filepath.Join(t.TempDir(), "state.json")
	before := ns.sysctls()
	_, addrsBefore := ns.dev("lo")

	ns.realserver(0, "add", "--mode", "dr", "10.200.0.1", "10.200.0.2", "2001:db8::1", "--state", state)
	up, addrs := ns.dev("lo")
	for _, want := range []string{"10.200.0.1/32", "10.200.0.2/32", "2001:db8::1/128"} {
		if !slices.Contains(addrs, want) {
			t.Errorf("lo has %v, want %s among them", addrs, want)
		}
	}
	if !up {
		t.Error("lo is not up: local delivery to the VIPs would not work")
	}
	set := map[string]string{
		"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2",
		"net/ipv4/conf/lo/arp_ignore": "1", "net/ipv4/conf/lo/arp_announce": "2",
		"net/ipv4/conf/all/rp_filter": before["net/ipv4/conf/all/rp_filter"],
	}
	if diff := cmp.Diff(set, ns.sysctls()); diff != "" {
		t.Errorf("sysctls after add (-want +got):\n%s", diff)
	}
	checkStatus(t, ns, state, 3)

	if out, _ := ns.realserver(0, "add", "--state", state, "--mode", "dr", "10.200.0.1"); out != "nothing to change\n" {
		t.Errorf("second add printed %q, want nothing to change", out)
	}
	ns.realserver(0, "remove", "--state", state, "10.200.0.1")
	if _, addrs := ns.dev("lo"); slices.Contains(addrs, "10.200.0.1/32") || !slices.Contains(addrs, "10.200.0.2/32") {
		t.Errorf("after removing 10.200.0.1, lo has %v", addrs)
	}
	if diff := cmp.Diff(set, ns.sysctls()); diff != "" {
		t.Errorf("sysctls after removing one VIP of three (-want +got):\n%s", diff)
	}
	if _, stderr := ns.realserver(1, "remove", "--state", state, "10.200.0.9"); !strings.Contains(stderr, "was not added by fulcrum-realserver") {
		t.Errorf("removing an unknown VIP: stderr %q", stderr)
	}

	ns.realserver(0, "remove", "--state", state, "10.200.0.2", "2001:db8::1")
	if diff := cmp.Diff(before, ns.sysctls()); diff != "" {
		t.Errorf("sysctls after the last remove (-before +after):\n%s", diff)
	}
	// Setting lo up gave it 127.0.0.1/8, which stays when it goes down.
	up, addrs = ns.dev("lo")
	if up || len(addrs) > len(addrsBefore)+1 {
		t.Errorf("after the last remove lo is up=%v with %v; want it down again, without the VIPs", up, addrs)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state file left after the last remove (stat: %v)", err)
	}
	if diff := cmp.Diff(hostBefore, hostSysctls(t)); diff != "" {
		t.Errorf("the host's own namespace changed (-before +after):\n%s", diff)
	}
}

// TestTunnelInNetworkNamespace: where the kernel has ipip (the QEMU guest
// tier proves it there), tun mode must work; where it cannot load it (the
// development host), add must fail with a clear error and change nothing.
func TestTunnelInNetworkNamespace(t *testing.T) {
	ns := newNetns(t)
	state := filepath.Join(t.TempDir(), "state.json")
	ns.realserver(0, "add", "--mode", "dr", "--state", state, "10.200.0.1")
	withDR := ns.sysctls()

	_, stderr, code := ns.exec(ns.self, "add", "--mode", "tun", "--state", state, "10.200.0.3")
	switch code {
	case 1:
		t.Logf("no ipip in this kernel: %s", stderr)
		if !strings.Contains(stderr, "tunl0 is missing and cannot be made") {
			t.Errorf("stderr %q does not say tunl0 cannot be made", stderr)
		}
		if diff := cmp.Diff(withDR, ns.sysctls()); diff != "" {
			t.Errorf("a failed tun add changed sysctls (-before +after):\n%s", diff)
		}
	case 0:
		up, addrs := ns.dev("tunl0")
		if !up || !slices.Contains(addrs, "10.200.0.3/32") {
			t.Errorf("tunl0 up=%v with %v; want up with 10.200.0.3/32", up, addrs)
		}
		got := ns.sysctls("net/ipv4/conf/tunl0/rp_filter")
		if got["net/ipv4/conf/all/rp_filter"] != "0" || got["net/ipv4/conf/tunl0/rp_filter"] != "0" {
			t.Errorf("rp_filter all=%s tunl0=%s, want 0 and 0", got["net/ipv4/conf/all/rp_filter"], got["net/ipv4/conf/tunl0/rp_filter"])
		}
		ns.realserver(0, "remove", "--state", state, "10.200.0.3")
		if diff := cmp.Diff(withDR, ns.sysctls()); diff != "" {
			t.Errorf("removing the tun VIP did not restore (-before +after):\n%s", diff)
		}
	default:
		t.Fatalf("add --mode tun: exit status %d: %s", code, stderr)
	}
	checkStatus(t, ns, state, 1)
	ns.realserver(0, "remove", "--state", state, "10.200.0.1")
}

func checkStatus(t *testing.T, ns *netns, state string, wantVIPs int) {
	t.Helper()
	out, _ := ns.realserver(0, "status", "-o", "json", "--state", state)
	var st realserver.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	if len(st.VIPs) != wantVIPs || len(st.Problems) > 0 {
		t.Errorf("status: %d VIPs (want %d), problems %v", len(st.VIPs), wantVIPs, st.Problems)
	}
	for _, v := range st.VIPs {
		if !v.Present {
			t.Errorf("status: %s not present", v.VIP)
		}
	}
}
