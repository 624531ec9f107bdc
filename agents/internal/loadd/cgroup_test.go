package loadd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUMax(t *testing.T) {
	tests := []struct {
		in            string
		quota, period int64
		wantErr       bool
	}{
		{in: string(readTestdata(t, "cgroup-v2/cpu.max-unlimited")), quota: -1, period: 100000},
		{in: string(readTestdata(t, "cgroup-v2/cpu.max-quarter")), quota: 25000, period: 100000},
		{in: string(readTestdata(t, "cgroup-v2/cpu.max-three")), quota: 150000, period: 50000},
		{in: "max", wantErr: true},
		{in: "lots 100000", wantErr: true},
		{in: "max often", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		quota, period, err := parseCPUMax([]byte(tt.in))
		if (err != nil) != tt.wantErr || quota != tt.quota || period != tt.period {
			t.Errorf("parseCPUMax(%q) = %d, %d, %v; want %d, %d, error %v", tt.in, quota, period, err, tt.quota, tt.period, tt.wantErr)
		}
	}
}

func TestParsePressureSomeTotal(t *testing.T) {
	for file, want := range map[string]uint64{"cgroup-v2/cpu.pressure": 6641602719, "cgroup-v2/cpu.pressure-root-old": 0} {
		if got, err := parsePressureSomeTotal(readTestdata(t, file)); err != nil || got != want {
			t.Errorf("%s: got %d, %v; want %d", file, got, err, want)
		}
	}
	if _, err := parsePressureSomeTotal(readTestdata(t, "cgroup-v2/cpu.pressure-no-some")); err == nil {
		t.Error("a file without a some line parsed")
	}
}

func TestParseKeyed(t *testing.T) {
	tests := map[string]map[string]uint64{
		"cgroup-v1/cpu.stat-idle": {"nr_periods": 0, "nr_throttled": 0, "throttled_time": 0, "nr_bursts": 0, "burst_time": 0},
		"cgroup-v1/cpu.stat-throttled": {"nr_periods": 1208, "nr_throttled": 1150, "throttled_time": 86713542881,
			"nr_bursts": 0, "burst_time": 0},
		"cgroup-v1/cpu.stat-old-kernel": {"nr_periods": 40, "nr_throttled": 3, "throttled_time": 1200000},
		"cgroup-v2/cpu.stat-no-controller": {"usage_usec": 28907817794, "user_usec": 21594061093,
			"system_usec": 7313756700, "nice_usec": 87604145},
		"cgroup-v2/cpu.stat-controller": {"usage_usec": 30217402, "user_usec": 30105221, "system_usec": 112181,
			"core_sched.force_idle_usec": 0, "nr_periods": 1208, "nr_throttled": 1150, "throttled_usec": 86713542,
			"nr_bursts": 0, "burst_usec": 0},
	}
	for file, want := range tests {
		got, err := parseKeyed(readTestdata(t, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
	for _, bad := range []string{"usage_usec", "usage_usec -1", "usage_usec 1 2"} {
		if _, err := parseKeyed([]byte(bad)); err == nil {
			t.Errorf("parseKeyed(%q) succeeded", bad)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{"0-1\n": 2, "0": 1, "0-3,8,10-11": 7, "": 0, "\n": 0} {
		if got, err := parseCPUList(in); err != nil || got != want {
			t.Errorf("parseCPUList(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"3-1", "a", "0-b"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) succeeded", bad)
		}
	}
}

func TestParseCgroupMounts(t *testing.T) {
	tests := map[string][]cgroupMount{
		"mountinfo-separate": {
			{root: "/", mountPoint: "/sys/fs/cgroup/cpu", controllers: []string{"rw", "cpu"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/cpuacct", controllers: []string{"rw", "cpuacct"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/cpuset", controllers: []string{"rw", "cpuset"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/memory", controllers: []string{"rw", "memory"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/devices", controllers: []string{"rw", "devices"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/freezer", controllers: []string{"rw", "freezer"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/blkio", controllers: []string{"rw", "blkio"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/pids", controllers: []string{"rw", "pids"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/systemd", controllers: []string{"rw", "name=systemd"}},
		},
		"mountinfo-comounted": {
			{root: "/", mountPoint: "/sys/fs/cgroup/systemd", controllers: []string{"rw", "xattr", "name=systemd"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/cpu,cpuacct", controllers: []string{"rw", "cpu", "cpuacct"}},
			{root: "/", mountPoint: "/sys/fs/cgroup/cpuset", controllers: []string{"rw", "cpuset"}},
		},
		"mountinfo-container": {
			{root: "/docker/0123abcd", mountPoint: "/sys/fs/cgroup/cpu", controllers: []string{"rw", "cpu"}},
			{root: "/docker/0123abcd", mountPoint: "/sys/fs/cgroup/cpuacct", controllers: []string{"rw", "cpuacct"}},
			{root: "/docker/0123abcd", mountPoint: "/sys/fs/cgroup/my group", controllers: []string{"rw", "cpuset"}},
		},
	}
	for file, want := range tests {
		got := parseCgroupMounts(readTestdata(t, file))
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(cgroupMount{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
}

// cgroupHost is a fake /sys/fs/cgroup under a temporary directory, with the
// mountinfo testdata file given pointing at it.
type cgroupHost struct {
	root, mountinfo, online string
}

func newCgroupHost(t *testing.T, mountinfoFile string) cgroupHost {
	dir := t.TempDir()
	h := cgroupHost{root: filepath.Join(dir, "cgroup"), mountinfo: filepath.Join(dir, "mountinfo"),
		online: filepath.Join(dir, "online")}
	writeFile(t, h.mountinfo, strings.ReplaceAll(string(readTestdata(t, mountinfoFile)), "/sys/fs/cgroup", h.root))
	writeFile(t, h.online, "0-3\n")
	return h
}

// write writes files relative to the fake cgroup root.
func (h cgroupHost) write(t *testing.T, files map[string]string) {
	for name, content := range files {
		writeFile(t, filepath.Join(h.root, name), content)
	}
}

func (h cgroupHost) open(path string) (*CgroupSource, error) {
	return openCgroup(filepath.Join(h.root, path), h.mountinfo, h.online)
}

func v1Files(cpuDir, acctDir string, quota int, usageNS, periods, throttled int) map[string]string {
	return map[string]string{
		cpuDir + "/cpu.cfs_quota_us":  itoa(quota),
		cpuDir + "/cpu.cfs_period_us": "100000\n",
		cpuDir + "/cpu.stat":          "nr_periods " + itoa(periods) + "\nnr_throttled " + itoa(throttled) + "\nthrottled_time 0\n",
		acctDir + "/cpuacct.usage":    itoa(usageNS),
	}
}

func v2Files(dir, cpuMax string, usageUS, someUS int) map[string]string {
	files := map[string]string{
		dir + "/cgroup.controllers": "cpu memory pids\n",
		dir + "/cpu.stat":           "usage_usec " + itoa(usageUS) + "\nuser_usec 0\nsystem_usec 0\n",
		dir + "/cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + itoa(someUS) +
			"\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	}
	if cpuMax != "" {
		files[dir+"/cpu.max"] = cpuMax
	}
	return files
}

func itoa(n int) string { return strconv.Itoa(n) + "\n" }

func TestOpenCgroup(t *testing.T) {
	t.Run("v1 cpu and cpuacct mounted apart, opened by either", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-separate")
		h.write(t, v1Files("cpu/web", "cpuacct/web", 25000, 1, 1, 0))
		for _, path := range []string{"cpu/web", "cpuacct/web"} {
			s, err := h.open(path)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != 1 || s.dir != filepath.Join(h.root, "cpu/web") || s.acctDir != filepath.Join(h.root, "cpuacct/web") {
				t.Errorf("open %s: version %d, dir %s, acctDir %s", path, s.Version(), s.dir, s.acctDir)
			}
		}
	})
	t.Run("v1 co-mounted", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-comounted")
		h.write(t, v1Files("cpu,cpuacct/web", "cpu,cpuacct/web", -1, 1, 0, 0))
		s, err := h.open("cpu,cpuacct/web")
		if err != nil {
			t.Fatal(err)
		}
		if s.dir != s.acctDir {
			t.Errorf("dir %s, acctDir %s: want the same", s.dir, s.acctDir)
		}
	})
	t.Run("v1 without the group under cpuacct", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-separate")
		files := v1Files("cpu/web", "cpuacct/web", 25000, 1, 1, 0)
		delete(files, "cpuacct/web/cpuacct.usage")
		h.write(t, files)
		if _, err := h.open("cpu/web"); err == nil || !strings.Contains(err.Error(), "no cpuacct directory") {
			t.Errorf("err = %v, want no cpuacct directory", err)
		}
	})
	t.Run("v2", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-separate")
		h.write(t, v2Files("unified/web", "max 100000\n", 1, 0))
		s, err := h.open("unified/web")
		if err != nil {
			t.Fatal(err)
		}
		if s.Version() != 2 || !s.pressure {
			t.Errorf("version %d, pressure %v; want 2, true", s.Version(), s.pressure)
		}
	})
	t.Run("not a cgroup", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-separate")
		h.write(t, map[string]string{"cpu/web/notes": "x"})
		if _, err := h.open("cpu/web"); err == nil || !strings.Contains(err.Error(), "not a cgroup v2 directory") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("v1 bad quota", func(t *testing.T) {
		h := newCgroupHost(t, "mountinfo-separate")
		h.write(t, v1Files("cpu/web", "cpuacct/web", 0, 1, 1, 0))
		if _, err := h.open("cpu/web"); err == nil || !strings.Contains(err.Error(), "not a CPU allowance") {
			t.Errorf("err = %v", err)
		}
	})
}

// Two readings of a group one second apart give the sample the package
// documentation's formulas describe.
func TestCgroupSourceSample(t *testing.T) {
	const second = float64(time.Second)
	tests := []struct {
		name        string
		mountinfo   string
		path        string
		first, then map[string]string
		want        Sample
	}{
		{
			name: "v1, quota 0.25 CPU, throttled in 9 of 10 periods", mountinfo: "mountinfo-separate", path: "cpu/web",
			first: v1Files("cpu/web", "cpuacct/web", 25000, 1_000_000_000, 100, 10),
			then:  v1Files("cpu/web", "cpuacct/web", 25000, 1_250_000_000, 110, 19),
			want:  Sample{Busy: 0.25 * second, BusyOf: 0.25 * second, Waiting: 9, WaitingOf: 10},
		},
		{
			name: "v1 without quota: the online CPUs", mountinfo: "mountinfo-comounted", path: "cpu,cpuacct/web",
			first: v1Files("cpu,cpuacct/web", "cpu,cpuacct/web", -1, 0, 0, 0),
			then:  v1Files("cpu,cpuacct/web", "cpu,cpuacct/web", -1, 2_000_000_000, 0, 0),
			want:  Sample{Busy: 2 * second, BusyOf: 4 * second},
		},
		{
			name: "v2, quota 0.25 CPU, 40 % of the time waiting", mountinfo: "mountinfo-separate", path: "unified/web",
			first: v2Files("unified/web", "25000 100000\n", 1_000_000, 500_000),
			then:  v2Files("unified/web", "25000 100000\n", 1_250_000, 900_000),
			want:  Sample{Busy: 0.25 * second, BusyOf: 0.25 * second, Waiting: 0.4 * second, WaitingOf: second},
		},
		{
			name: "v2 max: the group's cpuset", mountinfo: "mountinfo-separate", path: "unified/web",
			first: merge(v2Files("unified/web", "max 100000\n", 0, 0), map[string]string{"unified/web/cpuset.cpus.effective": "2-3\n"}),
			then:  v2Files("unified/web", "max 100000\n", 500_000, 0),
			want:  Sample{Busy: 0.5 * second, BusyOf: 2 * second, WaitingOf: second},
		},
		{
			name: "v2 without cpu.max (no cpu controller): the online CPUs", mountinfo: "mountinfo-separate", path: "unified/web",
			first: v2Files("unified/web", "", 0, 0),
			then:  v2Files("unified/web", "", 1_000_000, 0),
			want:  Sample{Busy: second, BusyOf: 4 * second, WaitingOf: second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newCgroupHost(t, tt.mountinfo)
			h.write(t, tt.first)
			s, err := h.open(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Unix(1000, 0)
			if got, err := s.Sample(context.Background(), t0); err != nil || !got.empty() {
				t.Fatalf("first sample = %+v, %v; want an empty baseline", got, err)
			}
			h.write(t, tt.then)
			got, err := s.Sample(context.Background(), t0.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sample (-want +got):\n%s", diff)
			}
		})
	}
}

// A group re-created (counters back to zero) or unreadable for a while
// starts a new baseline instead of giving a sample that spans the gap.
func TestCgroupSourceResetAndFailure(t *testing.T) {
	h := newCgroupHost(t, "mountinfo-separate")
	h.write(t, v2Files("unified/web", "max 100000\n", 5_000_000, 0))
	s, err := h.open("unified/web")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	sample := func(sec int) (Sample, error) {
		return s.Sample(context.Background(), t0.Add(time.Duration(sec)*time.Second))
	}
	if got, _ := sample(0); !got.empty() {
		t.Fatalf("baseline = %+v", got)
	}
	h.write(t, v2Files("unified/web", "max 100000\n", 1_000, 0)) // re-created
	if got, err := sample(1); err != nil || !got.empty() {
		t.Fatalf("after a reset = %+v, %v; want a new baseline", got, err)
	}
	if got, err := sample(2); err != nil || got.empty() {
		t.Fatalf("after the new baseline = %+v, %v; want a sample", got, err)
	}
	if err := os.Remove(filepath.Join(h.root, "unified/web/cpu.stat")); err != nil {
		t.Fatal(err)
	}
	if _, err := sample(3); err == nil {
		t.Fatal("no error without cpu.stat")
	}
	h.write(t, v2Files("unified/web", "max 100000\n", 9_000_000, 0))
	if got, err := sample(10); err != nil || !got.empty() {
		t.Fatalf("after a failure = %+v, %v; want a new baseline", got, err)
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
