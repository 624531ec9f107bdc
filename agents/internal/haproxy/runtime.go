package haproxy

import (
	"context"
	"fmt"
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
