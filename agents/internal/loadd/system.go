package loadd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// SystemSource measures the whole host from /proc/stat (formulas in the
// package documentation).
type SystemSource struct {
	// StatPath is the file read, /proc/stat on a real host.
	StatPath string

	prev *procStat // the previous reading; nil before the first
}

// procStat is what the load needs from one reading of /proc/stat.
type procStat struct {
	busy, total uint64 // aggregate CPU time in clock ticks: not idle or iowait, and all
	cores       int    // online CPUs: the cpuN lines
	running     int    // procs_running
}

// Kind returns "system".
func (s *SystemSource) Kind() string { return "system" }

// Sample reads /proc/stat: busy from the time since the previous reading,
// waiting from this reading's run queue.
func (s *SystemSource) Sample(_ context.Context, _ time.Time) (Sample, error) {
	b, err := os.ReadFile(s.StatPath)
	if err != nil {
		s.prev = nil
		return Sample{}, err
	}
	cur, err := parseProcStat(b)
	if err != nil {
		s.prev = nil
		return Sample{}, fmt.Errorf("%s: %w", s.StatPath, err)
	}
	prev := s.prev
	s.prev = &cur
	if prev == nil || cur.total < prev.total {
		return Sample{}, nil // a baseline
	}
	total := float64(cur.total - prev.total)
	// iowait may run backwards (it is an estimate), so busy is kept in [0, total].
	busy := min(max(float64(cur.busy)-float64(prev.busy), 0), total)
	waiting := float64(max(0, cur.running-1-cur.cores)) / float64(cur.cores)
	return Sample{Busy: busy, BusyOf: total, Waiting: waiting, WaitingOf: 1}, nil
}

// parseProcStat reads the aggregate "cpu" line, counts the "cpuN" lines and
// reads procs_running.
func parseProcStat(b []byte) (procStat, error) {
	var st procStat
	var sawCPU, sawRunning bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch name := fields[0]; {
		case name == "cpu":
			busy, total, err := parseCPULine(fields[1:])
			if err != nil {
				return procStat{}, err
			}
			st.busy, st.total, sawCPU = busy, total, true
		case strings.HasPrefix(name, "cpu"):
			st.cores++
		case name == "procs_running" && len(fields) == 2:
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				return procStat{}, fmt.Errorf("procs_running %q: %w", fields[1], err)
			}
			st.running, sawRunning = n, true
		}
	}
	switch {
	case sc.Err() != nil:
		return procStat{}, sc.Err()
	case !sawCPU:
		return procStat{}, fmt.Errorf("no aggregate cpu line")
	case st.cores == 0:
		return procStat{}, fmt.Errorf("no cpuN lines")
	case !sawRunning:
		return procStat{}, fmt.Errorf("no procs_running line")
	}
	return st, nil
}

// parseCPULine returns busy and total ticks from the numbers of a cpu line:
// user nice system idle iowait irq softirq steal [guest guest_nice]. The
// guest times are already counted in user and nice.
func parseCPULine(fields []string) (busy, total uint64, err error) {
	if len(fields) < 8 {
		return 0, 0, fmt.Errorf("cpu line has %d numbers, want at least 8", len(fields))
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(fields[i], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("cpu line: %w", err)
		}
	}
	for _, t := range v {
		total += t
	}
	idle := v[3] + v[4]
	return total - idle, total, nil
}
