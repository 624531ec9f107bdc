// Package apply turns a desired revision into live HAProxy configuration:
// stage the bundle's files as a new set, validate it with HAProxy, swap it
// in atomically, reload, and roll back to the last good set when HAProxy
// refuses it. Revisions that only change server weights or admin states
// are applied through HAProxy's runtime API instead, without a reload.
// Agent wraps it in the long-poll loop that fetches revisions and reports
// outcomes.
package apply

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// Daemon is the service the bundle configures. The haproxy package
// implements it for HAProxy; tests use fakes.
type Daemon interface {
	// Check validates the candidate set in dir without touching the
	// running service.
	Check(ctx context.Context, dir string) error
	// Running reports whether the service is up and controllable.
	Running(ctx context.Context) bool
	// Start launches the service from the live set.
	Start(ctx context.Context) error
	// Reload makes the running service load the live set and returns an
	// error unless it did.
	Reload(ctx context.Context) error
	// SetServers changes server weights and admin states in the running
	// service, without a reload; it fails at the first change refused.
	SetServers(ctx context.Context, changes []bundle.ServerChange) error
}

// Applier applies bundles to a Store and its Daemon.
type Applier struct {
	// Store is the state directory.
	Store Store
	// Daemon consumes every file of the bundle.
	Daemon Daemon
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// Resume starts the daemon when its live configuration exists but it is not
// running, so that a restarted agent (or host) serves the last applied
// revision before the API is even reachable. It first undoes an apply the
// agent did not finish, reloads the daemon if a runtime update was cut
// short, and removes sets nothing refers to.
func (a *Applier) Resume(ctx context.Context) error {
	if err := a.undoInterruptedApply(); err != nil {
		return err
	}
	a.prune()
	running := a.Daemon.Running(ctx)
	if running && a.Store.RuntimePending() {
		a.logger().Warn("a runtime update was interrupted; reloading so that haproxy matches the live files")
		if err := a.Daemon.Reload(ctx); err != nil {
			return err
		}
		a.clearRuntimePending()
	}
	if running || !a.Store.HasLive() {
		return nil
	}
	a.logger().Info("starting daemon from live configuration")
	if err := a.Daemon.Start(ctx); err != nil {
		return err
	}
	a.clearRuntimePending()
	return nil
}

// Apply makes bundle b live and returns the report to send. A bundle equal
// to what the daemon runs causes no reload; one that only changes server
// weights and admin states is applied at runtime; anything else is staged,
// checked, swapped in and reloaded.
func (a *Applier) Apply(ctx context.Context, b *client.Bundle) client.Report {
	if err := bundle.CheckNames(b.Files); err != nil {
		return failed(b.Revision, err.Error())
	}
	st, err := a.Store.State()
	if err != nil {
		return failed(b.Revision, err.Error())
	}
	live, err := a.Store.Live()
	if err != nil {
		return failed(b.Revision, "read live files: "+err.Error())
	}
	if isLoaded(st, live) && maps.Equal(Digests(b.Files), st.Files) {
		return a.succeeded(b, "no file changed; no reload")
	}
	staged, err := a.Store.Stage(b.Revision, b.Files)
	if err != nil {
		return failed(b.Revision, "stage: "+err.Error())
	}
	defer a.prune()
	changes, whyReload := runtimePlan(st, live, b.Files)
	if whyReload == nil && a.Daemon.Running(ctx) {
		r, err := a.applyAtRuntime(ctx, b, st, staged, changes)
		if err != nil {
			r = a.reloadInstead(ctx, b, st, staged, err)
		}
		return r
	}
	a.logger().Debug("apply: reload needed", "revision", b.Revision, "reason", whyReload)
	return a.applyWithReload(ctx, b, st, staged)
}

// applyAtRuntime sends the server changes to the running daemon, then swaps
// the staged set in without a reload, so that a later reload or restart
// keeps the same settings. On failure it reverts the changes it may have
// made (the caller then reloads, which also resets them). The runtime
// pending mark covers the span in which the daemon and the files disagree.
func (a *Applier) applyAtRuntime(ctx context.Context, b *client.Bundle, st State, staged string, changes []bundle.ServerChange) (client.Report, error) {
	if err := a.Store.SetRuntimePending(true); err != nil {
		return client.Report{}, fmt.Errorf("mark runtime update: %w", err)
	}
	err := a.Daemon.SetServers(ctx, changes)
	if err == nil {
		_, err = a.Store.Swap(staged, st.Files)
	}
	if err != nil {
		a.logger().Warn("apply: runtime update failed; reloading instead", "revision", b.Revision, "err", err)
		if rerr := a.Daemon.SetServers(ctx, revert(changes)); rerr != nil {
			a.logger().Warn("apply: reverting the runtime update failed", "err", rerr)
		}
		return client.Report{}, err
	}
	msg := fmt.Sprintf("applied at runtime without reload: %d server change(s)", len(changes))
	r := a.succeeded(b, msg)
	if r.State == client.StateApplied {
		a.clearRuntimePending()
	}
	return r, nil
}

// reloadInstead applies b with a reload after its runtime update failed
// with cause. A successful reload rebuilds every runtime setting from the
// files; otherwise the runtime pending mark stays, and Resume reloads.
func (a *Applier) reloadInstead(ctx context.Context, b *client.Bundle, st State, staged string, cause error) client.Report {
	r := a.applyWithReload(ctx, b, st, staged)
	if r.State == client.StateApplied {
		a.clearRuntimePending()
	}
	r.Message += "\n(the runtime update failed, so the revision was reloaded instead: " + cause.Error() + ")"
	return r
}

// applyWithReload checks the staged set, swaps it in and reloads (or
// starts) the daemon, restoring the previous set if the daemon refuses it.
func (a *Applier) applyWithReload(ctx context.Context, b *client.Bundle, st State, staged string) client.Report {
	if err := a.Daemon.Check(ctx, staged); err != nil {
		return failed(b.Revision, err.Error())
	}
	restore, err := a.Store.Swap(staged, st.Files)
	if err != nil {
		return failed(b.Revision, "swap: "+err.Error())
	}
	if err := a.activate(ctx); err != nil {
		return failed(b.Revision, a.rollback(ctx, restore, err))
	}
	return a.succeeded(b, "applied "+describeChanges(st.Files, b.Files))
}

// succeeded records bundle b as what the daemon now runs and returns the
// applied report, or a failed one if the record could not be written.
func (a *Applier) succeeded(b *client.Bundle, msg string) client.Report {
	if err := a.Store.SetState(State{Revision: b.Revision, Files: Digests(b.Files)}); err != nil {
		return failed(b.Revision, "record revision: "+err.Error())
	}
	return client.Report{Revision: b.Revision, State: client.StateApplied, Message: msg}
}

// undoInterruptedApply makes last-good live again when the agent died
// between a swap and the reload that should have followed: the live set is
// then not what the daemon loaded, but last-good is.
func (a *Applier) undoInterruptedApply() error {
	st, err := a.Store.State()
	if err != nil || len(st.Files) == 0 {
		return err
	}
	live, err := a.Store.Live()
	if err != nil || isLoaded(st, live) {
		return err
	}
	lastGood, err := a.Store.LastGood()
	if err != nil || !isLoaded(st, lastGood) {
		return err
	}
	a.logger().Warn("undoing an interrupted apply: restoring last-good")
	return a.Store.Restore(a.Store.target(lastGoodLink))
}

// activate reloads the daemon, or starts it when it is not running.
func (a *Applier) activate(ctx context.Context) error {
	if a.Daemon.Running(ctx) {
		return a.Daemon.Reload(ctx)
	}
	return a.Daemon.Start(ctx)
}

// rollback makes the set restore live again and reactivates the daemon on
// it, returning the failure message for the report.
func (a *Applier) rollback(ctx context.Context, restore string, cause error) string {
	msg := "reload failed, restored last-good configuration: " + cause.Error()
	if err := a.Store.Restore(restore); err != nil {
		return msg + "\nrestoring it failed too: " + err.Error()
	}
	if restore == "" {
		return msg + "\n(no previous configuration to go back to)"
	}
	if err := a.activate(ctx); err != nil {
		return msg + "\nreloading the last-good configuration failed too: " + err.Error()
	}
	a.logger().Warn("rolled back to last-good configuration")
	return msg
}

// clearRuntimePending drops the runtime pending mark once the daemon's
// settings match the live files; if that fails, Resume reloads once more,
// which is harmless.
func (a *Applier) clearRuntimePending() {
	if err := a.Store.SetRuntimePending(false); err != nil {
		a.logger().Warn("clearing the runtime update mark failed", "err", err)
	}
}

// prune removes the sets nothing refers to any more; a failure only costs
// disk space, so it is logged.
func (a *Applier) prune() {
	if err := a.Store.Prune(); err != nil {
		a.logger().Warn("removing old file sets failed", "err", err)
	}
}

func (a *Applier) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// isLoaded reports whether files exist and are what state.json says the
// daemon loaded.
func isLoaded(st State, files map[string]string) bool {
	return files != nil && maps.Equal(Digests(files), st.Files)
}

// describeChanges names the files of next that differ from the loaded
// digests, and the loaded files next drops, for the report.
func describeChanges(loaded, next map[string]string) string {
	var changed, removed []string
	for name, content := range next {
		if loaded[name] != Digest(content) {
			changed = append(changed, name)
		}
	}
	for name := range loaded {
		if _, ok := next[name]; !ok {
			removed = append(removed, name)
		}
	}
	if len(changed)+len(removed) == 0 {
		return "(files unchanged; reloaded to bring the live files back in line)"
	}
	slices.Sort(changed)
	slices.Sort(removed)
	msg := strings.Join(changed, ", ")
	if len(removed) > 0 {
		msg = strings.TrimPrefix(msg+"; removed "+strings.Join(removed, ", "), "; ")
	}
	return msg
}

func revert(changes []bundle.ServerChange) []bundle.ServerChange {
	undo := make([]bundle.ServerChange, len(changes))
	for i, c := range changes {
		undo[i] = c.Revert()
	}
	return undo
}

func failed(rev int64, msg string) client.Report {
	return client.Report{Revision: rev, State: client.StateFailed, Message: msg}
}
