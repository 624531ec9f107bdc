package haproxy

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// StatType is the kind of object a "show stat" line describes.
type StatType int

// The "type" column of "show stat".
const (
	TypeFrontend StatType = 0
	TypeBackend  StatType = 1
	TypeServer   StatType = 2
	TypeListener StatType = 3
)

// Stat is one line of "show stat": a frontend, backend, server or
// listener. Its columns are read by name, since HAProxy versions add
// columns (3.0 has srid, h1req and others that 2.6 lacks).
type Stat struct {
	cols map[string]int
	row  []string
}

// Proxy is the proxy's name (pxname), e.g. "pool-web".
func (s Stat) Proxy() string { return s.Field("pxname") }

// Name is the line's own name (svname): "FRONTEND", "BACKEND", or the
// server's or listener's name.
func (s Stat) Name() string { return s.Field("svname") }

// Type is the kind of object the line describes.
func (s Stat) Type() StatType {
	t, err := strconv.Atoi(s.Field("type"))
	if err != nil {
		return -1
	}
	return StatType(t)
}

// Has reports whether HAProxy's answer has the column at all.
func (s Stat) Has(name string) bool {
	_, ok := s.cols[name]
	return ok
}

// Field is the column's text; empty when the column is missing or empty
// (HAProxy leaves the columns that do not apply to the object empty).
func (s Stat) Field(name string) string {
	if i, ok := s.cols[name]; ok && i < len(s.row) {
		return s.row[i]
	}
	return ""
}

// Int is the column as an integer, and whether it holds one.
func (s Stat) Int(name string) (int64, bool) {
	v, err := strconv.ParseInt(s.Field(name), 10, 64)
	return v, err == nil
}

// Stats returns every line of "show stat" from the current worker.
func (m *Manager) Stats(ctx context.Context) ([]Stat, error) {
	out, err := m.CLI().Worker(ctx, "show stat")
	if err != nil {
		return nil, err
	}
	return ParseStats(out)
}

// CurrentWorker returns the PID of the current worker, whose counters
// "show stat" reports; a reload forks a new one, whose counters start at 0.
func (m *Manager) CurrentWorker(ctx context.Context) (int, error) {
	table, err := m.CLI().ShowProc(ctx)
	if err != nil {
		return 0, err
	}
	if len(table.Workers) == 0 {
		return 0, fmt.Errorf("show proc: no current worker")
	}
	return table.Workers[0], nil
}

// ParseStats reads the CSV answer of "show stat" (its header line starts
// with "# "). It requires the pxname, svname and type columns, and those
// named in required.
func ParseStats(out string, required ...string) ([]Stat, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("show stat: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("show stat: empty answer")
	}
	cols := map[string]int{}
	for i, name := range rows[0] {
		if _, dup := cols[name]; !dup && name != "" {
			cols[name] = i
		}
	}
	for _, name := range append([]string{"pxname", "svname", "type"}, required...) {
		if _, ok := cols[name]; !ok {
			return nil, fmt.Errorf("show stat: no %s column", name)
		}
	}
	stats := make([]Stat, 0, len(rows)-1)
	for _, row := range rows[1:] {
		stats = append(stats, Stat{cols: cols, row: row})
	}
	return stats, nil
}

// ServerStat is one server's live figures from "show stat".
type ServerStat struct {
	// Current is the server's current connections (scur).
	Current int
	// Weight is its effective weight, after any agent-check answer.
	Weight int
	// Status is HAProxy's status word, e.g. "UP", "DOWN", "MAINT", "DRAIN".
	Status string
	// AgentStatus is the last agent-check result, e.g. "L7OK"; empty when
	// the server has no agent.
	AgentStatus string
}

// ServerStats returns every server's figures from the current worker,
// keyed "backend/server" as in servers.json.
func (m *Manager) ServerStats(ctx context.Context) (map[string]ServerStat, error) {
	out, err := m.CLI().Worker(ctx, "show stat -1 4 -1")
	if err != nil {
		return nil, err
	}
	return ParseServerStats(out)
}

// ParseServerStats reads the server lines of a "show stat" answer, which
// must have the scur, weight and status columns.
func ParseServerStats(out string) (map[string]ServerStat, error) {
	stats, err := ParseStats(out, "scur", "weight", "status")
	if err != nil {
		return nil, err
	}
	servers := map[string]ServerStat{}
	for _, s := range stats {
		if s.Type() != TypeServer {
			continue
		}
		cur, _ := s.Int("scur")
		weight, _ := s.Int("weight")
		servers[s.Proxy()+"/"+s.Name()] = ServerStat{
			Current: int(cur), Weight: int(weight), Status: s.Field("status"), AgentStatus: s.Field("agent_status"),
		}
	}
	return servers, nil
}

// SetWeight sets a server's weight ("backend/server") in the current
// worker, as HAProxy's "set weight" does: until the next reload, or the
// server's next agent-check answer.
func (m *Manager) SetWeight(ctx context.Context, server string, weight int) error {
	cmd := fmt.Sprintf("set weight %s %d", server, weight)
	answer, err := m.CLI().Worker(ctx, cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if msg := strings.TrimSpace(answer); msg != "" {
		return fmt.Errorf("%s: haproxy answered %q", cmd, msg)
	}
	return nil
}
