// Package keepalived runs keepalived for the node agent: it validates
// configurations (keepalived --config-test, nft -c), starts keepalived
// from the live set in a session of its own so that it outlives the agent,
// reloads it with SIGHUP, stops it when a bundle no longer has
// keepalived.conf, and applies the bundle's nftables script (the firewall
// marks of port-range services) before each start and reload.
package keepalived

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/clock"
	"fulcrum/agents/internal/process"
)

// Defaults for Manager's timeouts.
const (
	DefaultCheckTimeout = 30 * time.Second
	DefaultStartTimeout = 15 * time.Second
	DefaultStopTimeout  = 10 * time.Second
	DefaultSettle       = time.Second
)

// pollInterval paces pid file polls while keepalived starts or stops.
const pollInterval = 25 * time.Millisecond

// CheckError is a candidate set that keepalived --config-test, nft -c or
// the agent's own parsing refused.
type CheckError struct {
	// Tool names what refused it.
	Tool string
	// Output is what it printed.
	Output string
}

// Error implements error.
func (e *CheckError) Error() string {
	return e.Tool + " rejected the configuration:\n" + strings.TrimSpace(e.Output)
}

// Manager controls one keepalived instance: its configuration is
// ConfDir/keepalived.conf, its pid files are in RunDir.
type Manager struct {
	// Binary is the keepalived executable.
	Binary string
	// Nft is the nft executable; empty refuses bundles with
	// keepalived.d/fulcrum.nft.
	Nft string
	// ExecPrefix is prepended to every keepalived and nft command, e.g.
	// ["ip", "netns", "exec", "fl-lb"]: the checks then see the
	// interfaces, and the nftables table lands in the namespace, where
	// keepalived runs.
	ExecPrefix []string
	// ConfDir holds the live keepalived.conf and keepalived.d/.
	ConfDir string
	// RunDir holds the pid files.
	RunDir string
	// LogFile, when set, receives keepalived's log (--log-console, no
	// syslog); empty means keepalived logs to syslog.
	LogFile string
	// Timeouts; zero means the package default. Settle is how long a start
	// or a reload is given before the process is checked to be alive.
	CheckTimeout, StartTimeout, StopTimeout, Settle time.Duration
	// BeforeLoad, when set, runs before every start and reload, e.g. to
	// prepare the files keepalived.conf refers to (the VRRP notify FIFO
	// and track files); its error fails the start or reload.
	BeforeLoad func(ctx context.Context) error
	// AfterLoad, when set, runs after every successful start and reload,
	// e.g. to put the wanted IPVS schedulers back.
	AfterLoad func(ctx context.Context)
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// New returns a Manager for keepalived binary loading
// confDir/keepalived.conf, applying nftables scripts with nft, and keeping
// its pid files in runDir.
func New(binary, nft string, execPrefix []string, confDir, runDir string) *Manager {
	return &Manager{Binary: binary, Nft: nft, ExecPrefix: execPrefix, ConfDir: confDir, RunDir: runDir}
}

// PIDFile is where keepalived writes the pid of its main process.
func (m *Manager) PIDFile() string { return filepath.Join(m.RunDir, "keepalived.pid") }

// pidFiles are the main process's and its children's pid files, main
// first.
func (m *Manager) pidFiles() []string {
	return []string{
		m.PIDFile(),
		filepath.Join(m.RunDir, "keepalived-vrrp.pid"),
		filepath.Join(m.RunDir, "keepalived-checkers.pid"),
		filepath.Join(m.RunDir, "keepalived-bfd.pid"),
	}
}

// Check validates the candidate set in dir: keepalived.d/ipvs.json and
// keepalived.d/ha.json must parse, keepalived --config-test must accept
// keepalived.conf, and nft -c keepalived.d/fulcrum.nft when there is one.
// A refusal is a *CheckError carrying the tool's output.
func (m *Manager) Check(ctx context.Context, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, orDefault(m.CheckTimeout, DefaultCheckTimeout))
	defer cancel()
	parsers := []struct {
		name  string
		parse func(string) error
	}{
		{bundle.IPVSFile, func(text string) error { _, err := bundle.ParseIPVS(text); return err }},
		{bundle.HAFile, func(text string) error { _, err := bundle.ParseHA(text); return err }},
	}
	for _, p := range parsers {
		text, err := os.ReadFile(filepath.Join(dir, p.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := p.parse(string(text)); err != nil {
			return &CheckError{Tool: "the agent", Output: err.Error()}
		}
	}
	if err := makeTrackFiles(filepath.Join(dir, bundle.HAFile)); err != nil {
		return err
	}
	if err := m.run(ctx, "keepalived", m.Binary, "--config-test", "--use-file", filepath.Join(dir, bundle.KeepalivedFile)); err != nil {
		return err
	}
	nftFile := filepath.Join(dir, bundle.NftFile)
	if _, err := os.Stat(nftFile); err != nil {
		return nil
	}
	if m.Nft == "" {
		return &CheckError{Tool: "the agent", Output: bundle.NftFile + " needs nft, and --nft is empty"}
	}
	return m.run(ctx, "nft", m.Nft, "--check", "--file", nftFile)
}

// makeTrackFiles makes the track files a candidate ha.json names, where
// they are missing, so that keepalived --config-test can follow them: it
// refuses a vrrp_track_file whose file does not exist (keepalived 2.3; the
// node's first HA revision has none yet). A file made here holds "0" (in
// service): no live configuration follows it yet, and the HA watcher's
// Prepare writes its value before keepalived loads the set. Existing files,
// which the live configuration follows, are left alone.
func makeTrackFiles(haFile string) error {
	text, err := os.ReadFile(haFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	h, err := bundle.ParseHA(string(text))
	if err != nil {
		return &CheckError{Tool: "the agent", Output: err.Error()}
	}
	for _, path := range []string{h.TrackFiles.Standby, h.TrackFiles.HAProxy} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.MkdirAll(h.RunDir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("track file %s: %w", path, err)
		}
		_, err = f.WriteString("0\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("track file %s: %w", path, err)
		}
	}
	return nil
}

// run runs a command through the exec prefix; a non-zero exit is a
// *CheckError from tool with the command's output.
func (m *Manager) run(ctx context.Context, tool string, argv ...string) error {
	out, err := m.command(ctx, argv...).CombinedOutput()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return &CheckError{Tool: tool, Output: string(out)}
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", argv[0], err)
	}
	return nil
}

func (m *Manager) command(ctx context.Context, argv ...string) *exec.Cmd {
	argv = append(append([]string{}, m.ExecPrefix...), argv...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// Running reports whether our keepalived is up: the process in the pid
// file is alive and was started with our pid file.
func (m *Manager) Running(context.Context) bool {
	return m.PID() > 0
}

// PID returns the pid of our keepalived's main process, 0 when it is not
// running. It only reads the pid file and /proc, so it is cheap to poll.
func (m *Manager) PID() int { return m.ours(m.PIDFile()) }

// VRRPPID returns the pid of our keepalived's VRRP child, 0 when there is
// none (not running, or no VRRP instance in its configuration yet).
func (m *Manager) VRRPPID() int { return m.ours(m.pidFiles()[1]) }

// ours returns the pid in pidFile when that process is alive and was
// started on our pid file, 0 otherwise.
func (m *Manager) ours(pidFile string) int {
	pid := process.ReadPIDFile(pidFile)
	if pid <= 0 || !process.Alive(pid) || !process.CommandLineHas(pid, m.PIDFile()) {
		return 0
	}
	return pid
}

// Start applies the live nftables script, launches keepalived from the
// live set and waits until it has written its pid file and is still alive
// after the settle time.
func (m *Manager) Start(ctx context.Context) error {
	if m.Running(ctx) {
		return errors.New("keepalived is already running")
	}
	if err := os.MkdirAll(m.RunDir, 0o700); err != nil {
		return err
	}
	if err := m.applyNft(ctx); err != nil {
		return err
	}
	if err := m.beforeLoad(ctx); err != nil {
		return err
	}
	for _, f := range m.pidFiles() {
		_ = os.Remove(f) // stale: keepalived refuses to start over a live one
	}
	exited, err := m.launch()
	if err != nil {
		return err
	}
	if err := m.awaitStart(ctx, exited); err != nil {
		return err
	}
	m.logger().Info("keepalived started", "pid", m.ours(m.PIDFile()))
	m.afterLoad(ctx)
	return nil
}

// launch starts "[prefix...] keepalived --dont-fork ..." in a session of
// its own (signals aimed at the agent's process group must not reach it)
// and returns a channel closed when the process exits. keepalived
// daemonizing itself would point its output at /dev/null; kept in the
// foreground it logs to LogFile.
func (m *Manager) launch() (<-chan struct{}, error) {
	pids := m.pidFiles()
	argv := append(append([]string{}, m.ExecPrefix...), m.Binary,
		"--dont-fork", "--use-file", filepath.Join(m.ConfDir, bundle.KeepalivedFile), "--log-detail",
		"--pid", pids[0], "--vrrp_pid", pids[1], "--checkers_pid", pids[2], "--bfd_pid", pids[3])
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if m.LogFile != "" {
		cmd.Args = append(cmd.Args, "--log-console", "--no-syslog")
		f, err := os.OpenFile(m.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("keepalived log: %w", err)
		}
		defer f.Close() // the child has its own copy
		cmd.Stdout, cmd.Stderr = f, f
	}
	m.logger().Debug("starting keepalived", "argv", cmd.Args)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start keepalived: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // reap it, should it die while the agent runs
		close(exited)
	}()
	return exited, nil
}

// awaitStart waits for the pid file, then for the settle time, failing if
// the process exits meanwhile.
func (m *Manager) awaitStart(ctx context.Context, exited <-chan struct{}) error {
	timeout := orDefault(m.StartTimeout, DefaultStartTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for !m.Running(ctx) {
		select {
		case <-exited:
			return m.failure("keepalived exited during start")
		case <-ctx.Done():
			return m.failure(fmt.Sprintf("keepalived wrote no pid file within %s", timeout))
		case <-time.After(pollInterval):
		}
	}
	select {
	case <-exited:
		return m.failure("keepalived exited right after starting")
	case <-ctx.Done():
		return m.failure("keepalived start interrupted")
	case <-time.After(orDefault(m.Settle, DefaultSettle)):
	}
	return nil
}

// Reload applies the live nftables script, runs BeforeLoad, sends SIGHUP
// to keepalived's main process and, after the settle time, checks that the
// same process is still running. keepalived says nothing when a reload is
// done; its configuration passed --config-test before.
//
// A reload is enough even when VRRP instances appear or go: keepalived
// 2.2.7 starts its VRRP child at a SIGHUP when the new configuration has
// instances and none runs, and a running child drops the instances the
// configuration no longer has, releasing their VIPs (the ha package's
// TestVRRPReload checks both). The VRRP child's reload also stops and
// starts lvs_sync_daemon as the configuration says, per keepalived's
// source (not checked here: it needs IPVS).
func (m *Manager) Reload(ctx context.Context) error {
	pid := m.ours(m.PIDFile())
	if pid == 0 {
		return errors.New("keepalived is not running")
	}
	if err := m.applyNft(ctx); err != nil {
		return err
	}
	if err := m.beforeLoad(ctx); err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("signal keepalived: %w", err)
	}
	if err := clock.Sleep(ctx, orDefault(m.Settle, DefaultSettle)); err != nil {
		return err
	}
	if m.ours(m.PIDFile()) != pid {
		return m.failure(fmt.Sprintf("keepalived (pid %d) is gone after SIGHUP", pid))
	}
	m.logger().Debug("keepalived reloaded", "pid", pid)
	m.afterLoad(ctx)
	return nil
}

// Stop ends keepalived (SIGTERM, which makes it remove the IPVS services
// it created, then SIGKILL after StopTimeout) and deletes the nftables
// table. It returns nil when nothing runs.
func (m *Manager) Stop(ctx context.Context) error {
	var pids []int
	for _, f := range m.pidFiles() {
		if pid := m.ours(f); pid > 0 {
			pids = append(pids, pid)
		}
	}
	if len(pids) > 0 {
		if err := process.Terminate(pids, orDefault(m.StopTimeout, DefaultStopTimeout)); err != nil {
			return fmt.Errorf("keepalived: %w", err)
		}
		m.logger().Info("keepalived stopped", "pids", pids)
	}
	return m.deleteNftTable(ctx)
}

// applyNft loads the live nftables script, or deletes the table when the
// live set has none.
func (m *Manager) applyNft(ctx context.Context) error {
	path := filepath.Join(m.ConfDir, bundle.NftFile)
	if _, err := os.Stat(path); err != nil {
		return m.deleteNftTable(ctx)
	}
	if m.Nft == "" {
		return errors.New(bundle.NftFile + " needs nft, and --nft is empty")
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(m.CheckTimeout, DefaultCheckTimeout))
	defer cancel()
	if out, err := m.command(ctx, m.Nft, "--file", path).CombinedOutput(); err != nil {
		return fmt.Errorf("nft -f %s: %w: %s", bundle.NftFile, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// deleteNftTable removes the table the nftables script made; a missing
// table (or a missing nft, which cannot have made one) is fine.
func (m *Manager) deleteNftTable(ctx context.Context) error {
	if m.Nft == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(m.CheckTimeout, DefaultCheckTimeout))
	defer cancel()
	argv := append([]string{m.Nft, "delete", "table"}, strings.Fields(bundle.NftTable)...)
	out, err := m.command(ctx, argv...).CombinedOutput()
	switch {
	case err == nil, errors.Is(err, exec.ErrNotFound), noSuchTable(string(out)):
		return nil
	}
	return fmt.Errorf("nft delete table %s: %w: %s", bundle.NftTable, err, strings.TrimSpace(string(out)))
}

// noSuchTable recognises nft's answer to deleting a table that does not
// exist ("Error: Could not process rule: No such file or directory").
func noSuchTable(out string) bool {
	return strings.Contains(out, "No such file or directory")
}

// failure is a start or reload error carrying the end of the log file.
func (m *Manager) failure(reason string) error {
	if m.LogFile == "" {
		return errors.New(reason + " (its log is in syslog)")
	}
	b, _ := os.ReadFile(m.LogFile)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return fmt.Errorf("%s; end of %s:\n%s", reason, m.LogFile, strings.TrimSpace(string(b)))
}

func (m *Manager) beforeLoad(ctx context.Context) error {
	if m.BeforeLoad == nil {
		return nil
	}
	if err := m.BeforeLoad(ctx); err != nil {
		return fmt.Errorf("prepare keepalived's files: %w", err)
	}
	return nil
}

func (m *Manager) afterLoad(ctx context.Context) {
	if m.AfterLoad != nil {
		m.AfterLoad(ctx)
	}
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
