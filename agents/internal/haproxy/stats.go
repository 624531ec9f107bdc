package haproxy

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

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

// ParseServerStats reads the CSV answer of "show stat" (its header line
// starts with "# "), picking the columns by name.
func ParseServerStats(out string) (map[string]ServerStat, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("show stat: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("show stat: empty answer")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"pxname", "svname", "scur", "weight", "status", "type"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("show stat: no %s column", name)
		}
	}
	field := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	stats := map[string]ServerStat{}
	for _, row := range rows[1:] {
		if field(row, "type") != "2" { // 2: server
			continue
		}
		cur, _ := strconv.Atoi(field(row, "scur"))
		weight, _ := strconv.Atoi(field(row, "weight"))
		stats[field(row, "pxname")+"/"+field(row, "svname")] = ServerStat{
			Current: cur, Weight: weight, Status: field(row, "status"), AgentStatus: field(row, "agent_status"),
		}
	}
	return stats, nil
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
