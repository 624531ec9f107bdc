// Package haproxy runs HAProxy in master-worker mode for the node agent:
// it validates configurations, starts the master daemonized so that it
// outlives the agent, reloads it seamlessly through the master CLI,
// confirming each reload from the master's process table, and changes
// server weights and admin states through the current worker's runtime API.
package haproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/clock"
	"fulcrum/agents/internal/process"
)

// Environment variables through which rendered configurations find their
// directories.
const (
	// RunDirEnv names the runtime directory (stats socket), e.g.
	// stats socket "${FULCRUM_RUN_DIR}/haproxy.sock" ... expose-fd listeners.
	RunDirEnv = "FULCRUM_RUN_DIR"
	// ConfDirEnv names the directory of the configuration being loaded,
	// whose haproxy.d/ holds the files it refers to, e.g.
	// "${FULCRUM_CONF_DIR}/haproxy.d/hosts.map".
	ConfDirEnv = "FULCRUM_CONF_DIR"
)

// ServerStateFile, in the runtime directory, receives the server states
// the next worker starts from before each reload (serverstate.go), for a
// configuration that sets
// server-state-file "${FULCRUM_RUN_DIR}/server-state".
const ServerStateFile = "server-state"

// Defaults for Manager's timeouts.
const (
	DefaultCheckTimeout  = 30 * time.Second
	DefaultStartTimeout  = 15 * time.Second
	DefaultReloadTimeout = 60 * time.Second
)

// pollInterval paces master CLI polls while HAProxy starts or reloads; the
// master socket refuses connections while the master re-executes.
const pollInterval = 25 * time.Millisecond

// CheckError is a configuration that "haproxy -c" rejected.
type CheckError struct {
	// Output is what haproxy printed.
	Output string
}

// Error implements error.
func (e *CheckError) Error() string {
	return "haproxy rejected the configuration:\n" + strings.TrimSpace(e.Output)
}

// ReloadError is a reload or start that HAProxy did not complete; the
// previous workers, if any, keep serving the previous configuration.
type ReloadError struct {
	// Reason says how the failure was detected.
	Reason string
	// Output is what HAProxy printed, when it printed anything.
	Output string
}

// Error implements error.
func (e *ReloadError) Error() string {
	if out := strings.TrimSpace(e.Output); out != "" {
		return e.Reason + ":\n" + out
	}
	return e.Reason
}

// Manager controls one HAProxy master-worker instance: its configuration
// is ConfDir/haproxy.cfg and its runtime files are in RunDir.
type Manager struct {
	// Binary is the haproxy executable.
	Binary string
	// ExecPrefix is prepended to the start command, e.g.
	// ["ip", "netns", "exec", "fl-lb"]. Checks run without it.
	ExecPrefix []string
	// ConfDir holds the live haproxy.cfg and haproxy.d/; exported to
	// HAProxy as FULCRUM_CONF_DIR. The master keeps its environment across
	// reloads, so this path must stay the same while its content changes.
	ConfDir string
	// RunDir holds the sockets and the pid file; exported to HAProxy as
	// FULCRUM_RUN_DIR.
	RunDir string
	// BindHelper runs the bind check (binds.go) in the node's network
	// namespace, after ExecPrefix: the agent's own "check-binds". Without
	// it the check runs in this process, which is right only where
	// ExecPrefix is empty; with neither, a reload finds out.
	BindHelper []string
	// Timeouts; zero means the package default.
	CheckTimeout, StartTimeout, ReloadTimeout time.Duration
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger

	masterPID atomic.Int64 // the master MasterAlive last recognised
}

// New returns a Manager for HAProxy binary loading confDir/haproxy.cfg and
// keeping its runtime files in runDir.
func New(binary string, execPrefix []string, confDir, runDir string) *Manager {
	return &Manager{Binary: binary, ExecPrefix: execPrefix, ConfDir: confDir, RunDir: runDir}
}

// MasterSocket is the path of the master CLI socket.
func (m *Manager) MasterSocket() string { return filepath.Join(m.RunDir, "master.sock") }

// PIDFile is where HAProxy writes the master's PID.
func (m *Manager) PIDFile() string { return filepath.Join(m.RunDir, "haproxy.pid") }

// CLI returns a client for the master CLI.
func (m *Manager) CLI() MasterCLI { return MasterCLI{Socket: m.MasterSocket()} }

// Check validates the configuration in dir with "haproxy -c", with
// FULCRUM_CONF_DIR pointing at dir so that it reads dir's haproxy.d/ files,
// then tries on the node the listeners the running HAProxy does not hold
// (checkBinds): a reload that cannot bind costs every VIP about 2 s.
func (m *Manager) Check(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, orDefault(m.CheckTimeout, DefaultCheckTimeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, m.Binary, "-c", "-f", filepath.Join(dir, bundle.MainFile))
	cmd.Env = m.env(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return &CheckError{Output: string(out)}
		}
		return fmt.Errorf("run %s -c: %w", m.Binary, err)
	}
	return m.checkBinds(ctx, dir)
}

// Running reports whether our master is up: it answers on its CLI socket,
// or the process in the pid file is alive and was started on our master
// socket (the socket refuses connections while the master re-executes).
func (m *Manager) Running(ctx context.Context) bool {
	if _, err := m.CLI().ShowProc(ctx); err == nil {
		return true
	}
	return m.MasterAlive()
}

// MasterAlive reports whether the process in the pid file is alive and was
// started on our master socket. It does not ask the master CLI, so it is
// cheap enough to poll every 100 ms; the master keeps its pid across
// reloads, and exits when a worker dies. A reload must not look like a
// death: the master rewrites the pid file (empty for a moment) and
// re-executes itself (its command line empty for a moment), so the master
// last recognised stands in for both.
func (m *Manager) MasterAlive() bool {
	last := int(m.masterPID.Load())
	pid := process.ReadPIDFile(m.PIDFile())
	if pid == 0 {
		pid = last
	}
	if pid == 0 || !process.Alive(pid) {
		return false
	}
	cmdline := process.CommandLine(pid)
	if bytes.Contains(cmdline, []byte(m.MasterSocket())) {
		m.masterPID.Store(int64(pid))
		return true
	}
	return len(cmdline) == 0 && pid == last
}

// Start launches HAProxy from the live config in master-worker daemon mode
// and waits until the master lists a worker. It starts every server from
// the configuration: the server state file is as old as the last reload
// (before a crash, a reboot), too old to trust, so it is removed first.
func (m *Manager) Start(ctx context.Context) error {
	if err := os.MkdirAll(m.RunDir, 0o700); err != nil {
		return err
	}
	m.removeServerState()
	timeout := orDefault(m.StartTimeout, DefaultStartTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := m.launch(ctx)
	if err != nil {
		return &ReloadError{Reason: "haproxy failed to start: " + err.Error(), Output: out}
	}
	for {
		if t, err := m.CLI().ShowProc(ctx); err == nil && len(t.Workers) > 0 {
			m.logger().Info("haproxy started", "master_pid", t.MasterPID, "workers", t.Workers)
			return nil
		}
		if err := clock.Sleep(ctx, pollInterval); err != nil {
			return &ReloadError{Reason: fmt.Sprintf("haproxy started but its master CLI gave no worker within %s", timeout), Output: out}
		}
	}
}

// launch runs "[prefix...] haproxy -W -D ...". The launched process exits
// once the master is daemonized, after binding, so its exit status covers
// parse and bind errors. Output goes to a file, not a pipe: the daemon
// would otherwise hold the pipe open and stall Wait.
func (m *Manager) launch(ctx context.Context) (string, error) {
	logf, err := os.CreateTemp(m.RunDir, "start-*.log")
	if err != nil {
		return "", err
	}
	defer os.Remove(logf.Name())
	defer logf.Close()
	argv := append(append([]string{}, m.ExecPrefix...), m.Binary,
		"-W", "-D", "-S", m.MasterSocket(), "-f", filepath.Join(m.ConfDir, bundle.MainFile), "-p", m.PIDFile())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = m.env(m.ConfDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A session of its own: signals aimed at the agent's process group
	// (Ctrl-C, systemd stopping the agent) must not reach HAProxy.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	m.logger().Debug("starting haproxy", "argv", argv)
	runErr := cmd.Run()
	out, _ := os.ReadFile(logf.Name())
	return string(out), runErr
}

// Reload makes the master load the live config again and confirms that it
// did. HAProxy 2.6 prints nothing on "reload" and 3.0 prints "Success=N", so
// the process table decides for both: the master's reload counter must
// advance, its failed-reload counter must not, and a current worker that was
// not current before must appear. The new worker starts each server from
// the health the current one saw (writeServerState).
func (m *Manager) Reload(ctx context.Context) error {
	timeout := orDefault(m.ReloadTimeout, DefaultReloadTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cli := m.CLI()
	before, err := cli.ShowProc(ctx)
	if err != nil {
		return &ReloadError{Reason: "haproxy master is not answering: " + err.Error()}
	}
	m.writeServerState(ctx)
	out, err := cli.Reload(ctx, timeout)
	if err != nil {
		return &ReloadError{Reason: "master cli reload: " + err.Error(), Output: out}
	}
	if strings.Contains(out, "Success=0") {
		return &ReloadError{Reason: "haproxy reported a failed reload", Output: out}
	}
	after, err := m.awaitReload(ctx, before)
	if err != nil {
		return &ReloadError{Reason: err.Error(), Output: out}
	}
	m.logger().Debug("haproxy reloaded", "reloads", after.Reloads,
		"workers", after.Workers, "old_workers", after.OldWorkers)
	return nil
}

// awaitReload polls "show proc" until the reload that followed before has
// either produced a new worker or been counted as failed.
func (m *Manager) awaitReload(ctx context.Context, before ProcTable) (ProcTable, error) {
	cli := m.CLI()
	var last ProcTable
	var lastErr error
	for {
		t, err := cli.ShowProc(ctx)
		last, lastErr = t, err
		if err == nil && t.Reloads > before.Reloads {
			if t.MasterPID != before.MasterPID {
				return t, fmt.Errorf("haproxy master changed from pid %d to %d during reload", before.MasterPID, t.MasterPID)
			}
			if t.Failed > before.Failed {
				return t, fmt.Errorf("haproxy master counted a failed reload (failed reloads %d -> %d); "+
					"workers %v keep serving the previous configuration. HAProxy before 2.7 does not "+
					"tell why on the master CLI: check that every bind address is local and free and "+
					"every referenced file readable", before.Failed, t.Failed, t.Workers)
			}
			if len(t.NewWorkers(before)) > 0 {
				return t, nil
			}
		}
		if err := clock.Sleep(ctx, pollInterval); err != nil {
			return last, fmt.Errorf("reload not confirmed in time (last show proc: %+v, error: %v)", last, lastErr)
		}
	}
}

// Stop terminates the master and its workers (SIGTERM, then SIGKILL after
// a grace period). It returns nil when nothing is running.
func (m *Manager) Stop(ctx context.Context) error {
	pids := []int{}
	if t, err := m.CLI().ShowProc(ctx); err == nil {
		pids = append(append(append(pids, t.MasterPID), t.Workers...), t.OldWorkers...)
	} else if pid := process.ReadPIDFile(m.PIDFile()); pid > 0 && m.Running(ctx) {
		pids = append(pids, pid)
	}
	if err := process.Terminate(pids, 5*time.Second); err != nil {
		return fmt.Errorf("haproxy: %w", err)
	}
	return nil
}

// env is the agent's environment plus the runtime directory and the
// directory of the configuration HAProxy is about to read.
func (m *Manager) env(confDir string) []string {
	return append(os.Environ(), RunDirEnv+"="+m.RunDir, ConfDirEnv+"="+confDir)
}

func (m *Manager) logger() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
