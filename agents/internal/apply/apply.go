// Package apply turns a desired revision into live daemon configuration:
// stage, validate with the daemon, swap atomically, reload, and roll back to
// the last good files when the daemon refuses them. Agent wraps it in the
// long-poll loop that fetches revisions and reports outcomes.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"fulcrum/agents/internal/client"
)

// Daemon is a service configured by files the agent manages. The haproxy
// package implements it for HAProxy; tests use fakes.
type Daemon interface {
	// Check validates a candidate configuration file without touching the
	// running service.
	Check(ctx context.Context, path string) error
	// Running reports whether the service is up and controllable.
	Running(ctx context.Context) bool
	// Start launches the service from its live configuration.
	Start(ctx context.Context) error
	// Reload makes the running service load its live configuration and
	// returns an error unless it did.
	Reload(ctx context.Context) error
}

// Files is the allowlist of file names a bundle may carry, each mapped to
// the daemon that consumes it. Every listed file must be in each bundle.
type Files map[string]Daemon

// Applier applies bundles to a Store and the daemons in Files.
type Applier struct {
	// Store is the state directory.
	Store Store
	// Files lists the accepted files and their daemons.
	Files Files
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// Resume starts every daemon whose live configuration exists but which is
// not running, so that a restarted agent (or host) serves the last applied
// revision before the API is even reachable.
func (a *Applier) Resume(ctx context.Context) error {
	if err := a.undoInterruptedApply(); err != nil {
		return err
	}
	var errs []error
	for _, d := range a.daemons(a.names()) {
		if d.Running(ctx) || !a.hasLive(d) {
			continue
		}
		a.logger().Info("starting daemon from live configuration")
		if err := d.Start(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Apply makes bundle b live and returns the report to send. Only files whose
// content differs from the live copy are swapped, and their daemons are
// reloaded once; an unchanged bundle causes no reload.
func (a *Applier) Apply(ctx context.Context, b *client.Bundle) client.Report {
	if err := a.checkNames(b.Files); err != nil {
		return failed(b.Revision, err.Error())
	}
	st, err := a.Store.State()
	if err != nil {
		return failed(b.Revision, err.Error())
	}
	changed, err := a.changedFiles(st, b.Files)
	if err != nil {
		return failed(b.Revision, err.Error())
	}
	if len(changed) == 0 {
		if err := a.record(b); err != nil {
			return failed(b.Revision, err.Error())
		}
		return client.Report{Revision: b.Revision, State: client.StateApplied, Message: "no file changed; no reload"}
	}
	if err := a.stageAndCheck(ctx, b.Files, changed); err != nil {
		return failed(b.Revision, err.Error())
	}
	canRestore, err := a.swap(st, changed)
	if err != nil {
		return failed(b.Revision, err.Error())
	}
	if err := a.activate(ctx, a.daemons(changed)); err != nil {
		return failed(b.Revision, a.rollback(ctx, changed, canRestore, err))
	}
	if err := a.record(b); err != nil {
		return failed(b.Revision, err.Error())
	}
	msg := fmt.Sprintf("applied %s", strings.Join(changed, ", "))
	return client.Report{Revision: b.Revision, State: client.StateApplied, Message: msg}
}

// checkNames refuses path-like names and anything outside the allowlist,
// and requires every allowlisted file.
func (a *Applier) checkNames(files map[string]string) error {
	for name := range files {
		if name == "" || strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
			return fmt.Errorf("refused file name %q: must be a plain file name", name)
		}
		if _, ok := a.Files[name]; !ok {
			return fmt.Errorf("refused file name %q: not one of %v", name, a.names())
		}
	}
	for _, name := range a.names() {
		if _, ok := files[name]; !ok {
			return fmt.Errorf("bundle lacks %s", name)
		}
	}
	return nil
}

// changedFiles lists, in name order, the files whose bundle content is not
// what the daemons loaded last or not what the live file holds.
func (a *Applier) changedFiles(st State, files map[string]string) ([]string, error) {
	var changed []string
	for _, name := range a.names() {
		live, ok, err := a.Store.Live(name)
		if err != nil {
			return nil, err
		}
		if !ok || live != files[name] || st.Files[name] != Digest(files[name]) {
			changed = append(changed, name)
		}
	}
	return changed, nil
}

// record notes bundle b as what the daemons now run.
func (a *Applier) record(b *client.Bundle) error {
	st := State{Revision: b.Revision, Files: map[string]string{}}
	for _, name := range a.names() {
		st.Files[name] = Digest(b.Files[name])
	}
	if err := a.Store.SetState(st); err != nil {
		return fmt.Errorf("record revision: %w", err)
	}
	return nil
}

// undoInterruptedApply puts back the last-good copy of any live file that
// was swapped in by an apply the agent did not finish (it died between the
// swap and the reload), so the live files match what the daemons run.
func (a *Applier) undoInterruptedApply() error {
	st, err := a.Store.State()
	if err != nil {
		return err
	}
	for _, name := range a.names() {
		loaded := st.Files[name]
		live, ok, err := a.Store.Live(name)
		if err != nil || !ok || loaded == "" || Digest(live) == loaded {
			continue
		}
		lastGood, err := os.ReadFile(a.Store.LastGoodPath(name))
		if err != nil || Digest(string(lastGood)) != loaded {
			continue
		}
		a.logger().Warn("undoing an interrupted apply: restoring last-good", "file", name)
		if err := a.Store.Restore(name, true); err != nil {
			return err
		}
	}
	return nil
}

// stageAndCheck writes the candidates and has each daemon validate its file.
// On failure nothing live has been touched and the candidates are removed.
func (a *Applier) stageAndCheck(ctx context.Context, files map[string]string, changed []string) error {
	var err error
	for _, name := range changed {
		if err = a.Store.Stage(name, files[name]); err != nil {
			err = fmt.Errorf("stage %s: %w", name, err)
			break
		}
		if err = a.Files[name].Check(ctx, a.Store.StagedPath(name)); err != nil {
			err = fmt.Errorf("%s: %w", name, err)
			break
		}
	}
	if err != nil {
		for _, name := range changed {
			a.Store.Unstage(name)
		}
	}
	return err
}

// swap renames the candidates over the live files, keeping last-good
// copies. It returns, per file, whether a last-good copy can be restored.
func (a *Applier) swap(st State, changed []string) (map[string]bool, error) {
	canRestore := map[string]bool{}
	for i, name := range changed {
		had, err := a.Store.Swap(name, st.Files[name])
		if err != nil {
			for _, done := range changed[:i] {
				_ = a.Store.Restore(done, canRestore[done])
			}
			for _, name := range changed {
				a.Store.Unstage(name)
			}
			return nil, fmt.Errorf("swap %s: %w", name, err)
		}
		canRestore[name] = had
	}
	return canRestore, nil
}

// activate reloads each running daemon and starts the others.
func (a *Applier) activate(ctx context.Context, daemons []Daemon) error {
	for _, d := range daemons {
		var err error
		if d.Running(ctx) {
			err = d.Reload(ctx)
		} else {
			err = d.Start(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rollback restores the last-good files and reactivates the daemons on them,
// returning the failure message for the report.
func (a *Applier) rollback(ctx context.Context, changed []string, canRestore map[string]bool, cause error) string {
	msg := "reload failed, restored last-good configuration: " + cause.Error()
	var restored []string
	for _, name := range changed {
		if err := a.Store.Restore(name, canRestore[name]); err != nil {
			return msg + "\nrestoring " + name + " failed too: " + err.Error()
		}
		if canRestore[name] {
			restored = append(restored, name)
		}
	}
	if len(restored) == 0 {
		return msg + "\n(no previous configuration to go back to)"
	}
	if err := a.activate(ctx, a.daemons(restored)); err != nil {
		return msg + "\nreloading the last-good configuration failed too: " + err.Error()
	}
	a.logger().Warn("rolled back to last-good configuration", "files", restored)
	return msg
}

// names returns the allowlisted file names in order.
func (a *Applier) names() []string {
	names := make([]string, 0, len(a.Files))
	for name := range a.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// daemons returns the distinct daemons of the named files, in name order.
func (a *Applier) daemons(names []string) []Daemon {
	var ds []Daemon
	for _, name := range names {
		if d := a.Files[name]; !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return ds
}

// hasLive reports whether all files of daemon d have a live copy.
func (a *Applier) hasLive(d Daemon) bool {
	for name, fd := range a.Files {
		if fd != d {
			continue
		}
		if _, ok, err := a.Store.Live(name); err != nil || !ok {
			return false
		}
	}
	return true
}

func (a *Applier) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

func failed(rev int64, msg string) client.Report {
	return client.Report{Revision: rev, State: client.StateFailed, Message: msg}
}
