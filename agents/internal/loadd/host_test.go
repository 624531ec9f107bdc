package loadd

// Tests against this host's real /proc/stat and cgroups, with real CPU
// burners. The cgroup ones need root (CI runs as root) and skip, saying why,
// without it or without the hierarchy they need.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	hostWindow  = time.Second
	hostSample  = 100 * time.Millisecond
	hostMeasure = 1500 * time.Millisecond // a window and a half
)

// startBurner runs a shell spinning on one CPU until the test ends.
func startBurner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// measureAll runs a meter on each source for hostMeasure, all at once, and
// returns their loads.
func measureAll(t *testing.T, sources ...Source) []Load {
	t.Helper()
	logger, logs := newTestLogger()
	ctx, cancel := context.WithTimeout(context.Background(), hostMeasure)
	defer cancel()
	meters := make([]*Meter, len(sources))
	var wg sync.WaitGroup
	for i, src := range sources {
		meters[i] = NewMeter(src, hostWindow, hostSample, logger)
		wg.Add(1)
		go func() {
			defer wg.Done()
			meters[i].Run(ctx)
		}()
	}
	wg.Wait()
	loads := make([]Load, len(sources))
	for i, m := range meters {
		l, err := m.Current(time.Now())
		if err != nil {
			t.Fatalf("%s source: %v; logs:\n%s", sources[i].Kind(), err, logs)
		}
		loads[i] = l
	}
	return loads
}

func TestHostSystemLoadRisesWithBurners(t *testing.T) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skipf("no /proc/stat: %v", err)
	}
	st, err := parseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	before := measureAll(t, &SystemSource{StatPath: "/proc/stat"})[0]
	burners := 2*st.cores + 1
	for range burners {
		startBurner(t)
	}
	during := measureAll(t, &SystemSource{StatPath: "/proc/stat"})[0]
	t.Logf("%d cores: load %d (busy %.2f, waiting %.2f) before, %d (busy %.2f, waiting %.2f) with %d burners",
		st.cores, before.Milli, before.Busy, before.Waiting, during.Milli, during.Busy, during.Waiting, burners)
	// Every burner is always runnable: at least burners − cores of them wait
	// in every sample, whatever else the host runs, and every CPU is busy.
	floor := int64(900 + 1000*(burners-st.cores)/st.cores)
	if during.Busy < 0.9 || during.Milli < floor {
		t.Errorf("with %d burners on %d cores: load %d, busy %.2f; want at least %d, busy 0.9", burners, st.cores,
			during.Milli, during.Busy, floor)
	}
	// The floor is also the rise: on a host quieter than the burners make it,
	// reaching it means the load rose; a host already that busy (another test
	// tier's emulated guests) has no rise to show, and a "before < during"
	// check there failed on noise (6000 before, 5818 with 5 burners, in a full run).
}

// A burner in a group held to a quarter of a CPU makes that group (the
// "server") fully loaded, while the same burner in a group without quota
// is not.
func TestHostCgroupV1(t *testing.T) {
	const cpuRoot, acctRoot = "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct"
	switch {
	case os.Geteuid() != 0:
		t.Skip("creating cgroups needs root (CI runs as root)")
	case !exists(cpuRoot, "cpu.cfs_quota_us") || !exists(acctRoot, "cpuacct.usage"):
		t.Skipf("no cgroup v1 cpu and cpuacct hierarchies at %s and %s", cpuRoot, acctRoot)
	}
	name := fmt.Sprintf("fulcrum-loadd-test-%d", os.Getpid())
	limited := makeV1Group(t, cpuRoot, acctRoot, name, 25000)
	free := makeV1Group(t, cpuRoot, acctRoot, name+"-free", -1)
	joinGroup(t, limited, startBurner(t))
	joinGroup(t, free, startBurner(t))

	limitedSrc, err := NewCgroupSource(limited[0])
	if err != nil {
		t.Fatal(err)
	}
	freeSrc, err := NewCgroupSource(free[len(free)-1]) // by its cpuacct directory
	if err != nil {
		t.Fatal(err)
	}
	loads := measureAll(t, limitedSrc, freeSrc, &SystemSource{StatPath: "/proc/stat"})
	l, f, sys := loads[0], loads[1], loads[2]
	t.Logf("quota 0.25 CPU: load %d (busy %.2f, waiting %.2f); no quota: %d (busy %.2f, waiting %.2f); "+
		"the host: %d (busy %.2f, waiting %.2f)",
		l.Milli, l.Busy, l.Waiting, f.Milli, f.Busy, f.Waiting, sys.Milli, sys.Busy, sys.Waiting)
	// Busy is measured against the group's quota, not the host's CPUs (where it
	// would be 0.125 on 2 CPUs). A host saturated by other work may keep the
	// burner from its whole quota (busy 0.74, the host waiting 3.41, in a full
	// run), so the floor is half the quota; the load, busy plus waiting, still
	// says the group wants more than it gets.
	if l.Busy < 0.5 || l.Milli < 1000 {
		t.Errorf("the limited group: load %d, busy %.2f; want at least 1000, busy 0.5 (it runs at its quota and waits)",
			l.Milli, l.Busy)
	}
	if f.Waiting != 0 || f.Milli >= l.Milli {
		t.Errorf("the group without quota: load %d, waiting %.2f; want below the limited group's %d, no waiting",
			f.Milli, f.Waiting, l.Milli)
	}
	// The host's load (logged above) is not asserted: besides the two
	// burners' 1.25 CPUs it is whatever else the host runs, which on a shared
	// CI machine swings by more than a load within the test.
}

// makeV1Group creates the group under the cpu and cpuacct hierarchies (once
// if they are mounted together) with the given quota (µs per 100 ms; -1
// none), removed when the test ends. It returns the directories, cpu first.
func makeV1Group(t *testing.T, cpuRoot, acctRoot, name string, quotaUS int) []string {
	t.Helper()
	dirs := []string{filepath.Join(cpuRoot, name)}
	if !sameDir(cpuRoot, acctRoot) {
		dirs = append(dirs, filepath.Join(acctRoot, name))
	}
	for _, dir := range dirs {
		makeGroupDir(t, dir)
	}
	writeControl(t, filepath.Join(dirs[0], "cpu.cfs_period_us"), "100000")
	writeControl(t, filepath.Join(dirs[0], "cpu.cfs_quota_us"), strconv.Itoa(quotaUS))
	// A large share, so that the group gets its quota however busy the host
	// is (go test runs other packages at the same time): the quota is what
	// the test is about.
	writeControl(t, filepath.Join(dirs[0], "cpu.shares"), "10240")
	return dirs
}

// makeGroupDir creates a cgroup directory, removed when the test ends
// (after its tasks: cleanups run last-registered first).
func makeGroupDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The kernel may still count a task just killed for a moment.
		for i := 0; ; i++ {
			err := syscall.Rmdir(dir)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				return
			}
			if i == 50 {
				t.Errorf("removing %s: %v", dir, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func joinGroup(t *testing.T, dirs []string, pid int) {
	t.Helper()
	for _, dir := range dirs {
		writeControl(t, filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
	}
}

func writeControl(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		t.Fatal(err)
	}
}

func sameDir(a, b string) bool {
	ai, aerr := os.Stat(a)
	bi, berr := os.Stat(b)
	return aerr == nil && berr == nil && os.SameFile(ai, bi)
}

// The v2 source on this host's cgroup v2 hierarchy (the whole tree on a
// unified host, /sys/fs/cgroup/unified on a hybrid one): with a quota where
// the cpu controller is available, else against the group's CPUs, with
// cpu.pressure for the time it waited.
func TestHostCgroupV2(t *testing.T) {
	root := ""
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if exists(dir, "cgroup.controllers") {
			root = dir
			break
		}
	}
	switch {
	case os.Geteuid() != 0:
		t.Skip("creating cgroups needs root (CI runs as root)")
	case root == "":
		t.Skip("no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified")
	}
	dir := filepath.Join(root, fmt.Sprintf("fulcrum-loadd-test-%d", os.Getpid()))
	makeGroupDir(t, dir)
	limited := exists(dir, "cpu.max")
	if limited {
		writeControl(t, filepath.Join(dir, "cpu.max"), "25000 100000")
		writeControl(t, filepath.Join(dir, "cpu.weight"), "10000") // as cpu.shares in v1
	}
	joinGroup(t, []string{dir}, startBurner(t))
	src, err := NewCgroupSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := measureAll(t, src)[0]
	t.Logf("%s (quota: %v): load %d (busy %.2f, waiting %.2f)", dir, limited, l.Milli, l.Busy, l.Waiting)
	if limited {
		if l.Busy < 0.8 || l.Milli < 800 {
			t.Errorf("quota 0.25 CPU: load %d, busy %.2f; want at least 800, busy 0.8", l.Milli, l.Busy)
		}
		return
	}
	// No quota: one always-runnable burner either runs (on one of the
	// group's CPUs) or waits, so the CPU it used plus the share of the time
	// it waited make about one whole, however busy the host is.
	cpus, err := src.allowance(-1, 0, filepath.Join(dir, "cpuset.cpus.effective"))
	if err != nil {
		t.Fatal(err)
	}
	used := l.Busy * cpus
	if !src.pressure {
		if used <= 0 || used > 1.1 {
			t.Errorf("one burner on %.0f CPUs: busy %.2f (%.2f CPUs), want above 0, at most 1.1 CPUs", cpus, l.Busy, used)
		}
		return
	}
	if whole := used + l.Waiting; whole < 0.8 || whole > 1.2 {
		t.Errorf("one burner on %.0f CPUs: %.2f CPUs used + %.2f waiting = %.2f, want about 1", cpus, used, l.Waiting, whole)
	}
}
