package haproxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fulcrum/agents/internal/bundle"
)

// SetServers applies server weight and admin state changes to the current
// worker through the master CLI, without a reload. It stops at the first
// command HAProxy does not answer with an empty line.
func (m *Manager) SetServers(ctx context.Context, changes []bundle.ServerChange) error {
	cli := m.CLI()
	for _, c := range changes {
		for _, cmd := range serverCommands(c) {
			answer, err := cli.Worker(ctx, cmd)
			if err != nil {
				return fmt.Errorf("%s: %w", cmd, err)
			}
			if msg := strings.TrimSpace(answer); msg != "" {
				return fmt.Errorf("%s: haproxy answered %q", cmd, msg)
			}
			m.logger().Debug("runtime api", "command", cmd)
		}
	}
	return nil
}

// serverCommands are the runtime API commands that take a server from
// c.From to c.To.
func serverCommands(c bundle.ServerChange) []string {
	var cmds []string
	if c.From.Weight != c.To.Weight {
		cmds = append(cmds, fmt.Sprintf("set weight %s %d", c.To.Name(), c.To.Weight))
	}
	if c.From.Admin != c.To.Admin {
		cmds = append(cmds, fmt.Sprintf("set server %s state %s", c.To.Name(), c.To.Admin))
	}
	return cmds
}

// saveServerState writes the current worker's "show servers state" to
// RunDir/server-state, so that a configuration using server-state-file
// and load-server-state-from-file carries server states across the
// reload. It is best effort: a reload must not fail for want of it.
func (m *Manager) saveServerState(ctx context.Context) {
	out, err := m.CLI().Worker(ctx, "show servers state")
	if err == nil && !strings.HasPrefix(out, "1\n") { // the state file format version
		err = fmt.Errorf("unexpected answer %q", firstLine(out))
	}
	if err == nil {
		err = writeReplace(filepath.Join(m.RunDir, ServerStateFile), []byte(out))
	}
	if err != nil {
		m.logger().Warn("could not save the server state before reloading", "err", err)
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
