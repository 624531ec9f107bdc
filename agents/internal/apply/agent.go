package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// Source yields the desired revision; client.Client implements it.
type Source interface {
	// Desired long-polls for a revision other than p.Known, returning
	// (nil, nil) when the wait elapsed with nothing new.
	Desired(ctx context.Context, p client.Poll) (*client.Bundle, error)
}

// Reporter sends apply outcomes; client.Client implements it.
type Reporter interface {
	// Report sends one outcome.
	Report(ctx context.Context, r client.Report) error
}

// Backoff produces capped exponential delays: Min, 2*Min, ... up to Max.
type Backoff struct {
	// Min is the first delay, Max the cap.
	Min, Max time.Duration
	next     time.Duration
}

// Next returns the delay to wait now and doubles the following one.
func (b *Backoff) Next() time.Duration {
	if b.next < b.Min {
		b.next = b.Min
	}
	d := b.next
	b.next = min(2*b.next, b.Max)
	return d
}

// Reset starts the sequence over after a success.
func (b *Backoff) Reset() { b.next = 0 }

// Agent is the node agent's loop: poll the desired revision, apply it,
// report, and back off while the API is unreachable. The daemons keep
// serving their last good configuration throughout, except after a
// revision awaiting confirmation, when the agent goes back to the one
// before if the API stays silent past the deadline (see Watch).
type Agent struct {
	// Source and Reporter talk to the API.
	Source   Source
	Reporter Reporter
	// Applier makes revisions live.
	Applier *Applier
	// Wait is the long-poll duration asked of the API.
	Wait time.Duration
	// Backoff paces retries after API errors.
	Backoff Backoff
	// DiskRetry paces the tries of a revision the node's disk refused
	// (Outcome.Retry); zero means DefaultDiskRetry.
	DiskRetry Backoff
	// Logger receives one line per poll result and apply; nil means
	// slog.Default().
	Logger *slog.Logger
	// Sleep waits d or until ctx ends; nil means a real timer. Now tells
	// the time; nil means time.Now. Tests replace both with a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// DaemonEvents receives what Supervise did; nil drops it.
	DaemonEvents interface {
		Add(events ...client.DaemonEvent)
	}
	// ConfirmGrace is how long past a revision's confirm deadline the agent
	// waits for an answer from the API before it goes back to the revision
	// it ran before.
	ConfirmGrace time.Duration

	pending     []client.Report // outcomes the API has not acknowledged, oldest first
	lastFailed  int64           // revision that failed; not retried (unless its failure was the disk's)
	watch       *Watch          // the confirm deadline watched, if any
	watchLoaded bool            // the watch a previous run left was read
}

// ErrApplyFailed is returned by Cycle when the revision could not be applied.
var ErrApplyFailed = errors.New("revision not applied")

// ErrDiskRefused is returned by Cycle, with ErrApplyFailed, when the node's
// disk refused to store the revision (Outcome.Retry): Run tries it again
// after a DiskRetry delay.
var ErrDiskRefused = errors.New("the node's disk refused it")

// DefaultDiskRetry paces the tries of a revision the node's disk refused:
// a disk that takes writes again is noticed within 10 s.
var DefaultDiskRetry = Backoff{Min: time.Second, Max: 10 * time.Second}

// Run cycles until ctx ends. Before each cycle it resumes the daemons, so
// one that died is restarted from its live configuration within a poll.
func (a *Agent) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := a.Applier.Resume(ctx); err != nil {
			a.logger().Error("resume: could not start from the live configuration", "err", err)
		}
		err := a.Cycle(ctx)
		switch {
		case errors.Is(err, ErrDiskRefused):
			a.Backoff.Reset()
			d := a.diskRetry()
			a.logger().Warn("the node's disk refused the revision; haproxy keeps the last good configuration", "retry_in", d)
			_ = a.pause(ctx, d)
		case err == nil || errors.Is(err, ErrApplyFailed):
			a.Backoff.Reset()
			a.DiskRetry.Reset()
		case ctx.Err() != nil:
		case a.goBackIfCutOff(ctx):
			a.Backoff.Reset()
		default:
			d := a.Backoff.Next()
			a.logger().Warn("api unavailable; haproxy keeps the last good configuration", "err", err, "retry_in", d)
			_ = a.pause(ctx, d)
		}
	}
	return nil
}

// Supervise brings back, within interval, a daemon that stopped between
// applies (Applier.Heal). Run resumes the daemons too, but only between
// long polls: a killed HAProxy was down 15-19 s.
// Each restart, and each new reason a restart failed, goes to DaemonEvents.
func (a *Agent) Supervise(ctx context.Context, interval time.Duration) {
	var failing map[string]string
	for ctx.Err() == nil {
		failing = a.heal(ctx, failing)
		if clock.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// heal is one pass of Supervise. said holds the restart failures reported
// ({daemon: error}); it returns those that last, so that a failure is
// reported once, not on every pass.
func (a *Agent) heal(ctx context.Context, said map[string]string) map[string]string {
	starts, err := a.Applier.Heal(ctx)
	if err != nil && ctx.Err() == nil {
		a.logger().Error("supervise: cannot read the live configuration", "err", err)
	}
	failing := map[string]string{}
	var events []client.DaemonEvent
	for _, s := range starts {
		e := client.DaemonEvent{At: a.now(), Daemon: s.Daemon, Outcome: client.DaemonRestarted}
		switch {
		case s.Err == nil:
			a.logger().Warn("supervise: a daemon had stopped; started it again from the live configuration", "daemon", s.Daemon)
			e.Detail = "it had stopped; started it again from the live configuration" + a.liveRevision()
		case ctx.Err() != nil:
			continue
		case said[s.Daemon] == s.Err.Error():
			failing[s.Daemon] = said[s.Daemon]
			continue
		default:
			a.logger().Error("supervise: could not start a daemon that had stopped", "daemon", s.Daemon, "err", s.Err)
			e.Outcome, e.Detail = client.DaemonRestartFailed, s.Err.Error()
			failing[s.Daemon] = e.Detail
		}
		events = append(events, e)
	}
	if len(events) > 0 && a.DaemonEvents != nil {
		a.DaemonEvents.Add(events...)
	}
	return failing
}

// liveRevision is " (revision N)" for the live revision, or nothing.
func (a *Agent) liveRevision() string {
	st, err := a.Applier.Store.State()
	if err != nil || st.Revision == 0 {
		return ""
	}
	return fmt.Sprintf(" (revision %d)", st.Revision)
}

// Once resumes the daemons and runs a single cycle (the --once flag).
func (a *Agent) Once(ctx context.Context) error {
	if err := a.Applier.Resume(ctx); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return a.Cycle(ctx)
}

// Cycle runs one poll, apply and report. It returns an error wrapping
// ErrApplyFailed when the revision was refused, and ErrDiskRefused too when
// the node's disk refused it, and other errors when the API could not be
// reached.
func (a *Agent) Cycle(ctx context.Context) error {
	a.loadWatch()
	if err := a.flushReport(ctx); err != nil {
		return err
	}
	known, err := a.Applier.Store.Revision()
	if err != nil {
		return err
	}
	b, err := a.poll(ctx, known)
	if err != nil {
		return fmt.Errorf("poll (known=%d): %w", known, err)
	}
	if b == nil {
		a.logger().Info("poll: no new revision", "revision", known)
		return nil
	}
	if a.confirmed(b, known) {
		return nil
	}
	if b.Revision == a.lastFailed {
		// Revisions are immutable: a refused one stays refused. The API
		// answers at once while it is the newest, so hold here instead.
		a.logger().Info("poll: newest revision failed before; waiting for a newer one", "revision", b.Revision, "live", known)
		return a.pause(ctx, a.Wait)
	}
	previous := a.previousOf(b)
	r := a.Applier.Apply(ctx, b)
	a.logApply(known, r.Report)
	switch {
	case r.State != client.StateFailed:
		a.watchAfter(b, previous)
	case !r.Retry:
		a.lastFailed = r.Revision
	}
	a.queueReport(r.Report)
	if err := a.flushReport(ctx); err != nil {
		return err
	}
	switch {
	case r.State == client.StateFailed && r.Retry:
		return fmt.Errorf("revision %d: %w, %w: %s", r.Revision, ErrApplyFailed, ErrDiskRefused, r.Message)
	case r.State == client.StateFailed:
		return fmt.Errorf("revision %d: %w: %s", r.Revision, ErrApplyFailed, r.Message)
	}
	return nil
}

// diskRetry returns how long to wait before trying again a revision the
// node's disk refused.
func (a *Agent) diskRetry() time.Duration {
	if a.DiskRetry.Max == 0 {
		a.DiskRetry.Min, a.DiskRetry.Max = DefaultDiskRetry.Min, DefaultDiskRetry.Max
	}
	return a.DiskRetry.Next()
}

// queueReport adds an outcome to send. An outcome for a revision already
// queued replaces it: the API keeps one state per revision.
func (a *Agent) queueReport(r client.Report) {
	a.pending = slices.DeleteFunc(a.pending, func(p client.Report) bool { return p.Revision == r.Revision })
	a.pending = append(a.pending, r)
}

// flushReport sends the pending outcomes in order, keeping those the API
// does not take for the next cycle.
func (a *Agent) flushReport(ctx context.Context) error {
	for len(a.pending) > 0 {
		r := a.pending[0]
		if err := a.Reporter.Report(ctx, r); err != nil {
			return fmt.Errorf("report revision %d: %w", r.Revision, err)
		}
		a.pending = a.pending[1:]
		a.heard()
	}
	return nil
}

func (a *Agent) logApply(known int64, r client.Report) {
	if r.State == client.StateApplied {
		a.logger().Info("apply: applied", "revision", r.Revision, "previous", known, "detail", r.Message)
		return
	}
	a.logger().Error("apply: failed", "revision", r.Revision, "live", known, "detail", r.Message)
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Agent) sleep(ctx context.Context, d time.Duration) error {
	if a.Sleep != nil {
		return a.Sleep(ctx, d)
	}
	return clock.Sleep(ctx, d)
}

func (a *Agent) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}
