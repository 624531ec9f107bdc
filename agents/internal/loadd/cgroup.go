package loadd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CgroupSource measures one control group, cgroup v2 or v1 (formulas in the
// package documentation). Only the group's own quota counts, not its
// ancestors'.
type CgroupSource struct {
	version    int    // 1 or 2
	dir        string // v2: the group; v1: its directory in the cpu hierarchy
	acctDir    string // v1: its directory in the cpuacct hierarchy
	onlinePath string // /sys/devices/system/cpu/online
	pressure   bool   // v2: cpu.pressure exists

	prev *cgroupReading // nil before the first reading and after a failure
}

// cgroupReading is one reading of a group's counters.
type cgroupReading struct {
	at        time.Time
	usageNS   float64 // CPU time used, cumulative
	allowance float64 // CPUs the group may use now
	waited    uint64  // v1: nr_throttled; v2: cpu.pressure "some" total (µs)
	periods   uint64  // v1: nr_periods
}

// NewCgroupSource opens the group at path: a cgroup v2 directory, or the
// group's directory in the v1 cpu or cpuacct hierarchy (the other one is
// the same group path under that controller's mount).
func NewCgroupSource(path string) (*CgroupSource, error) {
	return openCgroup(path, "/proc/self/mountinfo", "/sys/devices/system/cpu/online")
}

func openCgroup(path, mountinfoPath, onlinePath string) (*CgroupSource, error) {
	s := &CgroupSource{dir: path, onlinePath: onlinePath}
	var err error
	switch {
	case exists(path, "cgroup.controllers"):
		s.version = 2
		s.pressure = exists(path, "cpu.pressure")
	case exists(path, "cpu.cfs_quota_us"):
		s.version, s.acctDir = 1, path
		if !exists(path, "cpuacct.usage") {
			s.acctDir, err = otherController(path, "cpu", "cpuacct", mountinfoPath)
		}
	case exists(path, "cpuacct.usage"):
		s.version, s.acctDir = 1, path
		s.dir, err = otherController(path, "cpuacct", "cpu", mountinfoPath)
	default:
		return nil, fmt.Errorf("cgroup %s: not a cgroup v2 directory (no cgroup.controllers) nor a v1 cpu or cpuacct one", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", path, err)
	}
	if _, err := s.read(time.Now()); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns "cgroup".
func (s *CgroupSource) Kind() string { return "cgroup" }

// Version is 1 or 2.
func (s *CgroupSource) Version() int { return s.version }

// Sample reads the group's counters and returns what changed since the
// previous reading.
func (s *CgroupSource) Sample(_ context.Context, now time.Time) (Sample, error) {
	cur, err := s.read(now)
	if err != nil {
		s.prev = nil
		return Sample{}, err
	}
	prev := s.prev
	s.prev = &cur
	if prev == nil || !cur.at.After(prev.at) || cur.usageNS < prev.usageNS ||
		cur.waited < prev.waited || cur.periods < prev.periods {
		return Sample{}, nil // a baseline, or the group was re-created
	}
	elapsed := float64(cur.at.Sub(prev.at))
	sample := Sample{Busy: cur.usageNS - prev.usageNS, BusyOf: elapsed * cur.allowance}
	if s.version == 1 {
		sample.Waiting, sample.WaitingOf = float64(cur.waited-prev.waited), float64(cur.periods-prev.periods)
	} else {
		sample.Waiting, sample.WaitingOf = float64(cur.waited-prev.waited)*1e3, elapsed
	}
	return sample, nil
}

func (s *CgroupSource) read(now time.Time) (cgroupReading, error) {
	if s.version == 1 {
		return s.readV1(now)
	}
	return s.readV2(now)
}

func (s *CgroupSource) readV2(now time.Time) (cgroupReading, error) {
	r := cgroupReading{at: now}
	stat, err := readKeyed(filepath.Join(s.dir, "cpu.stat"), "usage_usec")
	if err != nil {
		return r, err
	}
	r.usageNS = float64(stat["usage_usec"]) * 1e3
	quota, period, err := readCPUMax(filepath.Join(s.dir, "cpu.max"))
	if err != nil {
		return r, err
	}
	if r.allowance, err = s.allowance(quota, period, filepath.Join(s.dir, "cpuset.cpus.effective")); err != nil {
		return r, err
	}
	if s.pressure {
		r.waited, err = readPressureSomeTotal(filepath.Join(s.dir, "cpu.pressure"))
	}
	return r, err
}

func (s *CgroupSource) readV1(now time.Time) (cgroupReading, error) {
	r := cgroupReading{at: now}
	usage, err := readUint(filepath.Join(s.acctDir, "cpuacct.usage"))
	if err != nil {
		return r, err
	}
	r.usageNS = float64(usage)
	stat, err := readKeyed(filepath.Join(s.dir, "cpu.stat"), "nr_periods", "nr_throttled")
	if err != nil {
		return r, err
	}
	r.waited, r.periods = stat["nr_throttled"], stat["nr_periods"]
	quota, err := readInt(filepath.Join(s.dir, "cpu.cfs_quota_us"))
	if err != nil {
		return r, err
	}
	period, err := readInt(filepath.Join(s.dir, "cpu.cfs_period_us"))
	if err != nil {
		return r, err
	}
	r.allowance, err = s.allowance(quota, period, "")
	return r, err
}

// allowance is quota / period in CPUs, or, without a quota (quota < 0), the
// CPUs of the group's cpuset file when given and present, else the online
// CPUs.
func (s *CgroupSource) allowance(quota, period int64, cpusetPath string) (float64, error) {
	if quota >= 0 {
		if quota == 0 || period <= 0 {
			return 0, fmt.Errorf("cgroup %s: quota %d / period %d is not a CPU allowance", s.dir, quota, period)
		}
		return float64(quota) / float64(period), nil
	}
	if cpusetPath != "" {
		if n, err := readCPUList(cpusetPath); err == nil && n > 0 {
			return float64(n), nil
		}
	}
	n, err := readCPUList(s.onlinePath)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no CPU", s.onlinePath)
	}
	return float64(n), nil
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// readKeyed reads a flat keyed file ("key value" lines, as cpu.stat) and
// requires the given keys.
func readKeyed(path string, required ...string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := parseKeyed(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%s: no %s", path, k)
		}
	}
	return m, nil
}

func parseKeyed(b []byte) (map[string]uint64, error) {
	m := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %q: want key and value", sc.Text())
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fields[0], err)
		}
		m[fields[0]] = v
	}
	return m, sc.Err()
}

// readCPUMax reads cgroup v2's cpu.max, "$QUOTA $PERIOD" or "max $PERIOD";
// quota is -1 for max, and for a missing file (the root group, or a group
// without the cpu controller).
func readCPUMax(path string) (quota, period int64, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	quota, period, err = parseCPUMax(b)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return quota, period, nil
}

func parseCPUMax(b []byte) (quota, period int64, err error) {
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, 0, fmt.Errorf("%q: want QUOTA PERIOD", b)
	}
	if period, err = strconv.ParseInt(fields[1], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("period: %w", err)
	}
	if fields[0] == "max" {
		return -1, period, nil
	}
	if quota, err = strconv.ParseInt(fields[0], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("quota: %w", err)
	}
	return quota, period, nil
}

// readPressureSomeTotal reads the "some" line's total (µs) of a PSI file.
func readPressureSomeTotal(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	total, err := parsePressureSomeTotal(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return total, nil
}

func parsePressureSomeTotal(b []byte) (uint64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				return strconv.ParseUint(v, 10, 64)
			}
		}
	}
	return 0, errors.New(`no "some ... total=" line`)
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// readCPUList counts the CPUs of a list file such as "0-3,8,10-11".
func readCPUList(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := parseCPUList(string(b))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

func parseCPUList(s string) (int, error) {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return 0, fmt.Errorf("CPU list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return 0, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		n += last - first + 1
	}
	return n, nil
}

// cgroupMount is one cgroup v1 hierarchy mounted on this host.
type cgroupMount struct {
	root        string   // the hierarchy path mounted (usually "/")
	mountPoint  string   // where
	controllers []string // from the super options, e.g. cpu, cpuacct
}

// otherController finds the directory of the group at path (in the v1
// hierarchy of controller from) in the hierarchy of controller to.
func otherController(path, from, to, mountinfoPath string) (string, error) {
	b, err := os.ReadFile(mountinfoPath)
	if err != nil {
		return "", err
	}
	mounts := parseCgroupMounts(b)
	src, ok := findMount(mounts, from, func(m cgroupMount) bool { return within(path, m.mountPoint) })
	if !ok {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy mounted above it", from)
	}
	group := filepath.Join(src.root, strings.TrimPrefix(path, src.mountPoint))
	dst, ok := findMount(mounts, to, func(m cgroupMount) bool { return within(group, m.root) })
	if !ok {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy mounted (needed with %s)", to, from)
	}
	dir := filepath.Join(dst.mountPoint, strings.TrimPrefix(group, dst.root))
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("the group has no %s directory: %w", to, err)
	}
	return dir, nil
}

// findMount returns the mount of controller with the longest mount point
// that satisfies ok.
func findMount(mounts []cgroupMount, controller string, ok func(cgroupMount) bool) (cgroupMount, bool) {
	var best cgroupMount
	found := false
	for _, m := range mounts {
		if slices.Contains(m.controllers, controller) && ok(m) && (!found || len(m.mountPoint) > len(best.mountPoint)) {
			best, found = m, true
		}
	}
	return best, found
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// mountinfoUnescape undoes the octal escapes of /proc/self/mountinfo.
var mountinfoUnescape = strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)

// parseCgroupMounts returns the cgroup v1 mounts of a mountinfo file:
// "id parent major:minor root mount-point options [optional...] - fstype
// source super-options".
func parseCgroupMounts(b []byte) []cgroupMount {
	var mounts []cgroupMount
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 || fields[sep+1] != "cgroup" {
			continue
		}
		mounts = append(mounts, cgroupMount{
			root:        mountinfoUnescape.Replace(fields[3]),
			mountPoint:  mountinfoUnescape.Replace(fields[4]),
			controllers: strings.Split(fields[sep+3], ","),
		})
	}
	return mounts
}
