package haproxy

// Server states across reloads.
//
// The rendered configuration names RunDir/server-state as its
// server-state-file and loads it in every backend
// (load-server-state-from-file global), so that a new worker starts each
// server as the previous worker last saw it instead of up: a member that
// its health check took down stays down through the reload, rather than
// taking requests until its first check in the new worker fails.
//
// The agent does not hand HAProxy the raw "show servers state", because
// HAProxy (2.6 and 3.0 alike, src/server_state.c) restores more from it
// than health, matching servers by backend and server name only:
//
//   - a maint state set through the runtime API outlives a new
//     configuration that has the server ready (HAProxy only lets the
//     configuration win when its "disabled" changed), and a runtime weight
//     outlives any configuration that keeps the old configured weight;
//     both are how the agent applies revisions without a reload, so a
//     later revision that undid them would not take effect;
//   - the saved port replaces the configured one, and the saved TLS, check
//     and agent endpoints are applied too, so a server that changed port
//     or TLS would keep the old ones.
//
// So the agent writes the file itself, from the configuration about to be
// loaded (servers.json): the endpoint, weight and admin state are the
// configuration's, and only the health verdict (operational state, check
// status and health counter) comes from the current worker, and only for
// the same server: same name, address and port, checked before and now,
// and not in maintenance (where its state says nothing of its health). The
// optional fields (TLS, check and agent endpoints) are left out.
//
// A checked server without such a verdict (new, moved, or back from
// maintenance) is written down: it takes traffic once its checks pass
// "rise" times, like a server whose checks failed. HAProxy 2.6 and 3.0 have
// no configuration keyword for that; 3.1 added "init-state", whose
// "fully-down" is this behaviour. A server in maintenance by configuration
// and a server without a health check get no line, so HAProxy applies
// their configuration alone (a line marking an unchecked server down would
// keep it down for good).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fulcrum/agents/internal/bundle"
)

// stateFields are the mandatory fields of the server state file format
// version 1, in their order; HAProxy accepts lines of 20 to 25 fields.
var stateFields = strings.Fields("be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state " +
	"srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health " +
	"srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord")

// Flags of the state file, from HAProxy's server-t.h and check-t.h.
const (
	adminMaint      = 0x27   // SRV_ADMF_FMAINT | IMAINT | CMAINT | RMAINT
	checkConfigured = 0x0002 // CHK_ST_CONFIGURED
)

// health is what a worker knows of a server's health: its state file
// fields srv_op_state, srv_time_since_last_change, srv_check_status,
// srv_check_result and srv_check_health.
type health struct {
	op, sinceChange, checkStatus, checkResult, checkHealth string
}

// unknownHealth is a server down (SRV_ST_STOPPED) whose check has not run
// yet (HCHK_STATUS_INI, CHK_RES_UNKNOWN).
var unknownHealth = health{op: "0", sinceChange: "0", checkStatus: "1", checkResult: "0", checkHealth: "0"}

// savedState is the current worker's "show servers state", keyed
// "backend/server", each line by field name.
type savedState map[string]map[string]string

// parseServerState reads "show servers state" (format version 1): the
// version line, a "# " line naming the fields, then one line per server.
func parseServerState(text string) (savedState, error) {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || lines[0] != "1" || !strings.HasPrefix(lines[1], "# ") {
		return nil, fmt.Errorf("not a version 1 server state: %q", firstLine(text))
	}
	names := strings.Fields(strings.TrimPrefix(lines[1], "# "))
	for _, want := range stateFields {
		if !slices.Contains(names, want) {
			return nil, fmt.Errorf("server state lacks field %s", want)
		}
	}
	saved := savedState{}
	for i, line := range lines[2:] {
		values := strings.Fields(line)
		if len(values) == 0 {
			continue
		}
		if len(values) != len(names) {
			return nil, fmt.Errorf("server state line %d: %d fields, want %d", i+3, len(values), len(names))
		}
		fields := make(map[string]string, len(names))
		for j, name := range names {
			fields[name] = values[j]
		}
		saved[fields["be_name"]+"/"+fields["srv_name"]] = fields
	}
	return saved, nil
}

// nextServerState is the server state file for the configuration whose
// servers are next, with the health saved carried over where it belongs to
// the same server (see the top of this file).
func nextServerState(saved savedState, next []bundle.Server) string {
	var b strings.Builder
	b.WriteString("1\n# " + strings.Join(stateFields, " ") + "\n")
	for _, s := range next {
		if !s.Checked || s.Admin != bundle.Ready || s.Address == "" {
			continue
		}
		h, ok := savedHealth(saved[s.Name()], s)
		if !ok {
			h = unknownHealth
		}
		weight := strconv.Itoa(s.Weight)
		// HAProxy matches the lines of the global file to servers by
		// backend and server name; it reads no id from it. Admin, check
		// and agent states 0 leave those to the configuration.
		fields := []string{"0", s.Backend, "0", s.Server, s.Address, h.op, "0", weight, weight,
			h.sinceChange, h.checkStatus, h.checkResult, h.checkHealth, "0", "0", "0", "0", "-", strconv.Itoa(s.Port), "-"}
		b.WriteString(strings.Join(fields, " ") + "\n")
	}
	return b.String()
}

// savedHealth returns what the current worker knows of server s's health
// from its saved line; false when the line is missing, belongs to another
// server (address or port changed), has no health check, or is in
// maintenance, where its state says nothing of its health.
func savedHealth(line map[string]string, s bundle.Server) (health, bool) {
	if line == nil {
		return health{}, false
	}
	addr, err := netip.ParseAddr(line["srv_addr"])
	want, _ := netip.ParseAddr(s.Address) // validated
	if err != nil || addr.Unmap() != want.Unmap() || line["srv_port"] != strconv.Itoa(s.Port) {
		return health{}, false
	}
	admin, err1 := strconv.Atoi(line["srv_admin_state"])
	checks, err2 := strconv.Atoi(line["srv_check_state"])
	if err1 != nil || err2 != nil || admin&adminMaint != 0 || checks&checkConfigured == 0 {
		return health{}, false
	}
	return health{
		op: line["srv_op_state"], sinceChange: line["srv_time_since_last_change"],
		checkStatus: line["srv_check_status"], checkResult: line["srv_check_result"], checkHealth: line["srv_check_health"],
	}, true
}

// writeServerState writes RunDir/server-state for the reload that follows:
// the servers of the live configuration (the one the reload loads) with
// the health the current worker saw. It is best effort: on failure it
// removes the file, so that HAProxy starts every server from its
// configuration rather than from an older file, and the reload goes on.
func (m *Manager) writeServerState(ctx context.Context) {
	err := m.buildServerState(ctx)
	if err != nil {
		m.logger().Warn("server states are not carried across this reload", "err", err)
		m.removeServerState()
	}
}

func (m *Manager) buildServerState(ctx context.Context) error {
	text, err := os.ReadFile(filepath.Join(m.ConfDir, bundle.ServersFile))
	if err != nil {
		return err
	}
	next, err := bundle.ParseServers(string(text))
	if err != nil {
		return err
	}
	out, err := m.CLI().Worker(ctx, "show servers state")
	if err != nil {
		return fmt.Errorf("show servers state: %w", err)
	}
	saved, err := parseServerState(out)
	if err != nil {
		return err
	}
	return writeReplace(m.ServerStatePath(), []byte(nextServerState(saved, next.Servers)))
}

// ServerStatePath is the server-state-file of the rendered configuration.
func (m *Manager) ServerStatePath() string { return filepath.Join(m.RunDir, ServerStateFile) }

// removeServerState removes the server state file, so that the next start
// or reload sets every server from the configuration.
func (m *Manager) removeServerState() {
	if err := os.Remove(m.ServerStatePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.logger().Warn("could not remove the server state file", "err", err)
	}
}

// writeReplace replaces path with data through a synced temporary file and
// a rename, so that HAProxy never reads a half-written file. When it cannot
// (a full or read-only disk), it removes what it wrote, whose pages a retry
// needs, and path too: a server state a reload earlier is worse than none.
func writeReplace(path string, data []byte) error {
	tmp := path + ".tmp"
	err := writeSynced(tmp, data)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(path)
	}
	return err
}

// writeSynced writes data to a new file at path (replacing any) and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
