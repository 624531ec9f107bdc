// Package apply turns a desired revision into live configuration: stage
// the bundle's files as a new set, validate it with the daemons whose part
// of the bundle changed (HAProxy, keepalived, the node firewall's nft),
// swap it in atomically, reload those daemons, and roll back to the last
// good set when one of them refuses it. Revisions that only change
// HAProxy server weights or admin states are applied through HAProxy's
// runtime API instead, without a reload. Agent wraps it in the long-poll
// loop that fetches revisions and reports outcomes.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// Daemon is a service that loads one part of the bundle (bundle.Part).
// The haproxy and keepalived packages implement it; tests use fakes.
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
	// Stop ends the service and undoes what its start set up; it returns
	// nil when nothing runs.
	Stop(ctx context.Context) error
}

// HAProxyDaemon is the daemon of the HAProxy part, which also takes
// server weight and admin-state changes without a reload.
type HAProxyDaemon interface {
	Daemon
	// SetServers changes server weights and admin states in the running
	// service, without a reload; it fails at the first change refused.
	SetServers(ctx context.Context, changes []bundle.ServerChange) error
}

// Outcome is an apply's report, and whether the same revision may apply
// when tried again.
type Outcome struct {
	client.Report
	// Retry says that the node's disk, not the revision, stopped the apply
	// (see diskFaults): the same revision applies once the disk takes
	// writes again, so the agent tries it again, while a revision a daemon
	// refused stays refused.
	Retry bool
}

// Applier applies bundles to a Store and the daemons that load it. Each
// daemon is checked, reloaded or stopped only when its part of the bundle
// changed, but the set is swapped and rolled back as a whole.
type Applier struct {
	// Store is the state directory.
	Store Store
	// HAProxy loads bundle.HAProxyPart, which every bundle has.
	HAProxy HAProxyDaemon
	// Keepalived loads bundle.KeepalivedPart; nil means keepalived is not
	// managed here: its files are stored with the set and nothing more.
	Keepalived Daemon
	// Firewall loads bundle.FirewallPart into the node's firewall; nil
	// means the firewall is not managed here: the file is stored only.
	Firewall Daemon
	// BeforeHeal, if set, is called by Heal with each daemon it found
	// stopped, before it starts it again: the HA watcher says HAProxy is
	// down first, so that keepalived gives the VIPs up as track_haproxy
	// asks, whichever of the two looked first.
	BeforeHeal func(daemon string)
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
	mu     sync.Mutex // one of Apply, Resume and Heal at a time
}

// unit is a daemon and the part of the bundle it loads.
type unit struct {
	part   bundle.Part
	daemon Daemon
}

// units lists the managed daemons in the order they are started and
// reloaded. The firewall comes last: a new service's port opens once its
// listener is there (a client's SYN dropped before is sent again; one
// refused is not), and a removed one closes after the listener went.
func (a *Applier) units() []unit {
	us := []unit{{bundle.HAProxyPart, a.HAProxy}}
	if a.Keepalived != nil {
		us = append(us, unit{bundle.KeepalivedPart, a.Keepalived})
	}
	if a.Firewall != nil {
		us = append(us, unit{bundle.FirewallPart, a.Firewall})
	}
	return us
}

// action is what one apply does to one daemon.
type action string

const (
	actStart  action = "start"
	actReload action = "reload"
	actStop   action = "stop"
)

// step is an action on a unit.
type step struct {
	unit
	act action
}

// run performs the step.
func (s step) run(ctx context.Context) error {
	var err error
	switch s.act {
	case actStart:
		err = s.daemon.Start(ctx)
	case actReload:
		err = s.daemon.Reload(ctx)
	case actStop:
		err = s.daemon.Stop(ctx)
	}
	if err != nil && s.part != bundle.HAProxyPart {
		err = fmt.Errorf("%s: %w", s.part.Daemon, err)
	}
	return err
}

// decide returns what a daemon needs so that it runs the set next: started
// when next configures it and it is down, reloaded when its files changed,
// stopped when next does not configure it (which also undoes what its
// start set up, hence a stop even when it is down but its files changed).
func decide(running, configured, changed bool) (action, bool) {
	switch {
	case configured && !running:
		return actStart, true
	case configured && changed:
		return actReload, true
	case !configured && (running || changed):
		return actStop, true
	}
	return "", false
}

// Resume starts each daemon whose live configuration exists but which is
// not running, so that a restarted agent (or host) serves the last applied
// revision before the API is even reachable. It first undoes an apply the
// agent did not finish, reloads HAProxy if a runtime update was cut short,
// and removes sets nothing refers to.
func (a *Applier) Resume(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.undoInterruptedApply(); err != nil {
		return err
	}
	a.prune()
	live, err := a.Store.Live()
	if err != nil {
		return err
	}
	if a.Store.RuntimePending() && a.HAProxy.Running(ctx) {
		a.logger().Warn("a runtime update was interrupted; reloading so that haproxy matches the live files")
		if err := a.HAProxy.Reload(ctx); err != nil {
			return err
		}
		a.clearRuntimePending()
	}
	var errs []error
	for _, s := range a.startStopped(ctx, live, a.units()) {
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("start %s: %w", s.Daemon, s.Err))
		}
	}
	return errors.Join(errs...)
}

// Start is a daemon found stopped and started from the live set, or not
// (Err says why).
type Start struct {
	Daemon string
	Err    error
}

// startStopped starts, from the live set, each of units whose part the live
// set has and that does not run; it returns one Start for each.
func (a *Applier) startStopped(ctx context.Context, live map[string]string, units []unit) []Start {
	var starts []Start
	for _, u := range units {
		if live == nil || !u.part.In(live) || u.daemon.Running(ctx) {
			continue
		}
		a.logger().Info("starting daemon from live configuration", "daemon", u.part.Daemon)
		err := u.daemon.Start(ctx)
		starts = append(starts, Start{Daemon: u.part.Daemon, Err: err})
		if err == nil && u.part == bundle.HAProxyPart {
			a.clearRuntimePending()
		}
	}
	return starts
}

// Heal starts again, from the live configuration, HAProxy or keepalived
// when it runs no longer though the live set has its part: killed, or
// crashed (a killed HAProxy worker takes its master down, and the reverse).
// Between applies only: it waits for one under way. It returns a Start for
// each daemon it found stopped, and the error of reading the live set.
func (a *Applier) Heal(ctx context.Context) ([]Start, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	live, err := a.Store.Live()
	if err != nil {
		return nil, err
	}
	// The firewall is nftables state, not a process: nothing of it dies.
	processes := slices.DeleteFunc(a.units(), func(u unit) bool { return u.part == bundle.FirewallPart })
	if a.BeforeHeal != nil && live != nil {
		for _, u := range processes {
			if u.part.In(live) && !u.daemon.Running(ctx) {
				a.BeforeHeal(u.part.Daemon)
			}
		}
	}
	return a.startStopped(ctx, live, processes), nil
}

// Apply makes bundle b live and returns the outcome to report. A bundle
// equal to what the daemons run causes no reload; one that only changes
// HAProxy server weights and admin states is applied at runtime; anything
// else is staged, checked, swapped in, and each daemon whose part changed
// is reloaded (or started, or stopped). Everything the apply writes to the
// state directory (the set, its record) is written before it touches a
// daemon, so a disk that refuses a write leaves them as they were.
func (a *Applier) Apply(ctx context.Context, b *client.Bundle) Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := bundle.CheckNames(b.Files); err != nil {
		return failed(b.Revision, err.Error())
	}
	st, err := a.Store.State()
	if err != nil {
		return failedOn(b.Revision, "", err)
	}
	live, err := a.Store.Live()
	if err != nil {
		return failedOn(b.Revision, "read live files", err)
	}
	defer a.Store.DiscardState()
	if isLoaded(st, live) && maps.Equal(Digests(b.Files), st.Files) {
		if err := a.prepareRecord(b); err != nil {
			return failedOn(b.Revision, "record revision", err)
		}
		return a.succeeded(b, "no file changed; no reload")
	}
	staged, err := a.Store.Stage(b.Revision, b.Files)
	if err != nil {
		return failedOn(b.Revision, "stage", err)
	}
	defer a.prune()
	if err := a.prepareRecord(b); err != nil {
		return failedOn(b.Revision, "record revision", err)
	}
	changes, whyReload := runtimePlan(st, live, b.Files)
	if whyReload == nil && a.HAProxy.Running(ctx) {
		r, err := a.applyAtRuntime(ctx, b, st, staged, changes)
		if err != nil {
			r = a.reloadInstead(ctx, b, st, staged, err)
		}
		return r
	}
	a.logger().Debug("apply: reload needed", "revision", b.Revision, "reason", whyReload)
	return a.applyWithReload(ctx, b, st, staged, !isLoaded(st, live))
}

// applyAtRuntime sends the server changes to the running HAProxy, then
// swaps the staged set in without a reload, so that a later reload or
// restart keeps the same settings. On failure it reverts the changes it may
// have made (the caller then reloads, which also resets them). The runtime
// pending mark covers the span in which HAProxy and the files disagree.
func (a *Applier) applyAtRuntime(ctx context.Context, b *client.Bundle, st State, staged string, changes []bundle.ServerChange) (Outcome, error) {
	if err := a.Store.SetRuntimePending(true); err != nil {
		return Outcome{}, fmt.Errorf("mark runtime update: %w", err)
	}
	err := a.HAProxy.SetServers(ctx, changes)
	if err == nil {
		_, err = a.Store.Swap(staged, st.Files)
	}
	if err != nil {
		a.logger().Warn("apply: runtime update failed; reloading instead", "revision", b.Revision, "err", err)
		if rerr := a.HAProxy.SetServers(ctx, revert(changes)); rerr != nil {
			a.logger().Warn("apply: reverting the runtime update failed", "err", rerr)
		}
		return Outcome{}, err
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
func (a *Applier) reloadInstead(ctx context.Context, b *client.Bundle, st State, staged string, cause error) Outcome {
	r := a.applyWithReload(ctx, b, st, staged, false)
	if r.State == client.StateApplied {
		a.clearRuntimePending()
	}
	r.Message += "\n(the runtime update failed, so the revision was reloaded instead: " + cause.Error() + ")"
	return r
}

// applyWithReload checks the staged set with every daemon that must start
// or reload, swaps it in and runs the steps, restoring the previous set
// (for every daemon it touched) if one fails. all treats every part as
// changed, for when the live set is not what the daemons loaded.
func (a *Applier) applyWithReload(ctx context.Context, b *client.Bundle, st State, staged string, all bool) Outcome {
	steps := a.plan(ctx, st.Files, Digests(b.Files), all)
	for _, s := range steps {
		if s.act == actStop {
			continue
		}
		if err := s.daemon.Check(ctx, staged); err != nil {
			return failedOn(b.Revision, "", err)
		}
	}
	restore, err := a.Store.Swap(staged, st.Files)
	if err != nil {
		return failedOn(b.Revision, "swap", err)
	}
	for i, s := range steps {
		if err := s.run(ctx); err != nil {
			return failed(b.Revision, a.rollback(ctx, restore, steps[:i+1], "reload failed", err))
		}
	}
	if err := a.Store.CommitState(); err != nil { // the disk went read-only since the record was prepared
		o := failed(b.Revision, a.rollback(ctx, restore, steps, "recording the revision failed", err))
		o.Retry = isDiskFault(err)
		return o
	}
	return applied(b, "applied "+describeChanges(st.Files, b.Files)+a.unmanagedNote(st.Files, b.Files))
}

// plan lists the steps that make the daemons run the set whose digests are
// next, given the digests they loaded.
func (a *Applier) plan(ctx context.Context, loaded, next map[string]string, all bool) []step {
	var steps []step
	for _, u := range a.units() {
		changed := all || !maps.Equal(u.part.Of(loaded), u.part.Of(next))
		if act, ok := decide(u.daemon.Running(ctx), u.part.In(next), changed); ok {
			steps = append(steps, step{u, act})
		}
	}
	return steps
}

// unmanagedNote tells the report that keepalived files changed while
// keepalived is not managed by this agent.
func (a *Applier) unmanagedNote(loaded, next map[string]string) string {
	p := bundle.KeepalivedPart
	if a.Keepalived != nil || maps.Equal(p.Of(loaded), p.Of(Digests(next))) {
		return ""
	}
	return " (keepalived is not managed by this agent: its files are stored only)"
}

// prepareRecord writes the record of bundle b for succeeded to commit.
func (a *Applier) prepareRecord(b *client.Bundle) error {
	return a.Store.PrepareState(State{Revision: b.Revision, Files: Digests(b.Files)})
}

// succeeded commits the record prepareRecord wrote, bundle b is what the
// daemons now run, and returns the applied outcome, or a failed one if the
// record could not be committed.
func (a *Applier) succeeded(b *client.Bundle, msg string) Outcome {
	if err := a.Store.CommitState(); err != nil {
		o := failed(b.Revision, "record revision: "+err.Error())
		o.Retry = isDiskFault(err)
		return o
	}
	return applied(b, msg)
}

// undoInterruptedApply makes last-good live again when the agent died
// between a swap and the reloads that should have followed: the live set
// is then not what the daemons loaded, but last-good is.
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

// rollback makes the set restore live again and brings the daemons the
// failed apply touched back to it, returning the failure message for the
// report: what failed, and its cause.
func (a *Applier) rollback(ctx context.Context, restore string, touched []step, what string, cause error) string {
	msg := what + ", restored last-good configuration: " + cause.Error()
	if err := a.Store.Restore(restore); err != nil {
		return msg + "\nrestoring it failed too: " + err.Error()
	}
	var prev map[string]string
	if restore != "" {
		var err error
		if prev, err = ReadFiles(restore); err != nil {
			return msg + "\nreading it failed too: " + err.Error()
		}
	}
	var errs []string
	for _, s := range touched {
		act, ok := decide(s.daemon.Running(ctx), s.part.In(prev), true)
		if !ok {
			continue
		}
		if err := (step{s.unit, act}).run(ctx); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if restore == "" {
		msg += "\n(no previous configuration to go back to)"
	}
	if len(errs) > 0 {
		return msg + "\nreloading the last-good configuration failed too: " + strings.Join(errs, "; ")
	}
	a.logger().Warn("rolled back to last-good configuration")
	return msg
}

// clearRuntimePending drops the runtime pending mark once HAProxy's
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
// daemons loaded.
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
	if len(changed) == 0 {
		return "the removal of " + strings.Join(removed, ", ")
	}
	msg := strings.Join(changed, ", ")
	if len(removed) > 0 {
		msg += "; removed " + strings.Join(removed, ", ")
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

func applied(b *client.Bundle, msg string) Outcome {
	return Outcome{Report: client.Report{Revision: b.Revision, State: client.StateApplied, Message: msg}}
}

func failed(rev int64, msg string) Outcome {
	return Outcome{Report: client.Report{Revision: rev, State: client.StateFailed, Message: msg}}
}
