package haproxy

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ProcTable is the parsed answer of the master CLI's "show proc".
type ProcTable struct {
	// MasterPID is the master process, which keeps its PID across reloads.
	MasterPID int
	// Reloads counts the master's reloads, successful or not.
	Reloads int
	// Failed counts failed reloads. HAProxy 2.6 resets it to 0 after a
	// successful reload; other versions may not, so only an increase is
	// meaningful.
	Failed int
	// Workers are the current workers, serving the latest loaded config.
	Workers []int
	// OldWorkers are workers from previous generations still finishing
	// their connections.
	OldWorkers []int
}

// The master line: "<pid> master <reloads> [failed: <n>] <uptime> <version>"
// (HAProxy 2.5 and later; the "[failed: n]" part is optional).
var masterLine = regexp.MustCompile(`^(\d+)\s+master\s+(\d+)(?:\s+\[failed:\s*(\d+)\])?\s`)

var workerLine = regexp.MustCompile(`^(\d+)\s+worker\s`)

// ParseShowProc parses "show proc" output. Section headers ("# workers",
// "# old workers", "# programs") decide what a worker line means.
func ParseShowProc(out string) (ProcTable, error) {
	var t ProcTable
	section := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			section = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		if m := masterLine.FindStringSubmatch(line); m != nil {
			t.MasterPID, _ = strconv.Atoi(m[1])
			t.Reloads, _ = strconv.Atoi(m[2])
			if m[3] != "" {
				t.Failed, _ = strconv.Atoi(m[3])
			}
			continue
		}
		if m := workerLine.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[1])
			switch section {
			case "workers":
				t.Workers = append(t.Workers, pid)
			case "old workers":
				t.OldWorkers = append(t.OldWorkers, pid)
			}
		}
	}
	if t.MasterPID == 0 {
		return t, fmt.Errorf("show proc: no master line in %q", out)
	}
	return t, nil
}

// NewWorkers lists the current workers of t that were not current in before:
// the workers a reload forked.
func (t ProcTable) NewWorkers(before ProcTable) []int {
	seen := make(map[int]bool, len(before.Workers))
	for _, pid := range before.Workers {
		seen[pid] = true
	}
	var fresh []int
	for _, pid := range t.Workers {
		if !seen[pid] {
			fresh = append(fresh, pid)
		}
	}
	return fresh
}
