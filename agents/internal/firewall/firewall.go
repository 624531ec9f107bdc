// Package firewall loads the node's firewall sets for the node agent (its
// --firewall flag): the bundle's firewall.nft replaces, in one nft
// transaction, the elements of the sets of the appliance's firewall
// baseline (table inet fulcrum_firewall, which fulcrum-firewall.service
// loads at boot) with the revision's enabled virtual services and the
// traffic between the balancers. Manager is the unit of
// bundle.FirewallPart for the apply package: checked with nft --check,
// loaded after every swap and at start-up, the sets emptied when a bundle
// has no firewall.nft.
package firewall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"fulcrum/agents/internal/bundle"
)

// DefaultTimeout bounds every nft command.
const DefaultTimeout = 30 * time.Second

// CheckError is a candidate firewall.nft that nft refused, or that cannot
// be loaded because the baseline's table is missing.
type CheckError struct {
	// Output is what nft printed, or why the check could not pass.
	Output string
}

// Error implements error.
func (e *CheckError) Error() string {
	return "nft rejected the configuration:\n" + strings.TrimSpace(e.Output)
}

// Manager loads ConfDir/firewall.nft into the baseline's table. It is not
// safe for concurrent use; the agent's apply loop is its only user.
type Manager struct {
	// Nft is the nft executable.
	Nft string
	// ExecPrefix is prepended to every nft command, e.g. ["ip", "netns",
	// "exec", "fl-lb"]: the sets are then those of that namespace.
	ExecPrefix []string
	// ConfDir holds the live firewall.nft.
	ConfDir string
	// Timeout bounds each nft command; zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger

	// loaded is the handle of the table the live file was last loaded
	// into; 0 when it was not (yet), or the sets were emptied since. A
	// reloaded baseline is a new table with a new handle and empty sets.
	loaded int64
}

// New returns a Manager loading confDir/firewall.nft with nft.
func New(nft string, execPrefix []string, confDir string) *Manager {
	return &Manager{Nft: nft, ExecPrefix: execPrefix, ConfDir: confDir}
}

// errNoTable explains a missing baseline table.
var errNoTable = errors.New("table " + bundle.FirewallTable +
	" does not exist: the appliance's firewall baseline is not loaded (fulcrum-firewall.service)")

// Check validates dir/firewall.nft against the node's own ruleset with
// nft --check, which needs the baseline's table to be there. A refusal is
// a *CheckError.
func (m *Manager) Check(ctx context.Context, dir string) error {
	handle, err := m.tableHandle(ctx)
	if err != nil {
		return err
	}
	if handle == 0 {
		return &CheckError{Output: errNoTable.Error()}
	}
	out, err := m.nft(ctx, nil, "--check", "--file", filepath.Join(dir, bundle.FirewallFile))
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return &CheckError{Output: out}
	}
	return err
}

// Running reports whether the live file is what the sets hold: this
// Manager loaded it into the table that exists now. It is false at
// start-up and after the baseline was loaded again, so the agent's resume
// loads the file then.
func (m *Manager) Running(ctx context.Context) bool {
	if m.loaded == 0 {
		return false
	}
	handle, err := m.tableHandle(ctx)
	return err == nil && handle == m.loaded
}

// Start loads the live file.
func (m *Manager) Start(ctx context.Context) error { return m.load(ctx) }

// Reload loads the live file; nft replaces the sets' elements at once.
func (m *Manager) Reload(ctx context.Context) error { return m.load(ctx) }

// load runs nft --file on the live file, making sure that the table it
// went into is still the one there (the baseline was not loaded again
// meanwhile, which would have emptied the sets).
func (m *Manager) load(ctx context.Context) error {
	before, err := m.tableHandle(ctx)
	if err != nil {
		return err
	}
	if before == 0 {
		return errNoTable
	}
	m.loaded = 0
	if out, err := m.nft(ctx, nil, "--file", filepath.Join(m.ConfDir, bundle.FirewallFile)); err != nil {
		return fmt.Errorf("nft -f %s: %w: %s", bundle.FirewallFile, err, strings.TrimSpace(out))
	}
	after, err := m.tableHandle(ctx)
	if err != nil {
		return err
	}
	if after != before {
		return errors.New("table " + bundle.FirewallTable + " was replaced while its sets were loaded; loading again at the next cycle")
	}
	m.loaded = before
	m.logger().Info("firewall sets loaded", "table", bundle.FirewallTable)
	return nil
}

// Stop empties the sets (a bundle without firewall.nft opens nothing). A
// missing table has nothing to empty.
func (m *Manager) Stop(ctx context.Context) error {
	m.loaded = 0
	handle, err := m.tableHandle(ctx)
	if err != nil || handle == 0 {
		return err
	}
	var script strings.Builder
	for _, set := range bundle.FirewallSets {
		fmt.Fprintf(&script, "flush set %s %s\n", bundle.FirewallTable, set)
	}
	if out, err := m.nft(ctx, strings.NewReader(script.String()), "--file", "/dev/stdin"); err != nil {
		return fmt.Errorf("empty the firewall sets: %w: %s", err, strings.TrimSpace(out))
	}
	m.logger().Info("firewall sets emptied", "table", bundle.FirewallTable)
	return nil
}

// tableHandle returns the kernel's handle of the baseline's table, 0 when
// there is no such table.
func (m *Manager) tableHandle(ctx context.Context) (int64, error) {
	out, err := m.nft(ctx, nil, "--json", "list", "tables")
	if err != nil {
		return 0, fmt.Errorf("nft list tables: %w: %s", err, strings.TrimSpace(out))
	}
	return parseTableHandle([]byte(out))
}

// parseTableHandle finds the baseline's table in the output of
// nft --json list tables.
func parseTableHandle(out []byte) (int64, error) {
	var listing struct {
		Nftables []struct {
			Table *struct {
				Family string `json:"family"`
				Name   string `json:"name"`
				Handle int64  `json:"handle"`
			} `json:"table"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &listing); err != nil {
		return 0, fmt.Errorf("nft list tables: %w", err)
	}
	for _, item := range listing.Nftables {
		if t := item.Table; t != nil && t.Family+" "+t.Name == bundle.FirewallTable {
			return t.Handle, nil
		}
	}
	return 0, nil
}

// nft runs nft with args through the exec prefix and returns its output
// (stdout, then stderr).
func (m *Manager) nft(ctx context.Context, stdin *strings.Reader, args ...string) (string, error) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append(append([]string{}, m.ExecPrefix...), m.Nft), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	err := cmd.Run()
	return stdout.String() + stderr.String(), err
}

func (m *Manager) logger() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}
