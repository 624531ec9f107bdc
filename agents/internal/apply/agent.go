package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// Source yields the desired revision; client.Client implements it.
type Source interface {
	// Desired long-polls for a revision newer than known, returning
	// (nil, nil) when the wait elapsed with nothing new.
	Desired(ctx context.Context, known int64, wait time.Duration) (*client.Bundle, error)
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
// serving their last good configuration throughout.
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
	// Logger receives one line per poll result and apply; nil means
	// slog.Default().
	Logger *slog.Logger
	// Sleep waits d or until ctx ends; nil means a real timer. Tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	pending    *client.Report // an outcome the API has not acknowledged
	lastFailed int64          // revision that failed; not retried
}

// ErrApplyFailed is returned by Cycle when the revision could not be applied.
var ErrApplyFailed = errors.New("revision not applied")

// Run cycles until ctx ends. Before each cycle it resumes the daemons, so
// one that died is restarted from its live configuration within a poll.
func (a *Agent) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if err := a.Applier.Resume(ctx); err != nil {
			a.logger().Error("resume: could not start from the live configuration", "err", err)
		}
		err := a.Cycle(ctx)
		switch {
		case err == nil || errors.Is(err, ErrApplyFailed):
			a.Backoff.Reset()
		case ctx.Err() != nil:
		default:
			d := a.Backoff.Next()
			a.logger().Warn("api unavailable; haproxy keeps the last good configuration", "err", err, "retry_in", d)
			_ = a.sleep(ctx, d)
		}
	}
	return nil
}

// Once resumes the daemons and runs a single cycle (the --once flag).
func (a *Agent) Once(ctx context.Context) error {
	if err := a.Applier.Resume(ctx); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return a.Cycle(ctx)
}

// Cycle runs one poll, apply and report. It returns an error wrapping
// ErrApplyFailed when the revision was refused, and other errors when the
// API could not be reached.
func (a *Agent) Cycle(ctx context.Context) error {
	if err := a.flushReport(ctx); err != nil {
		return err
	}
	known, err := a.Applier.Store.Revision()
	if err != nil {
		return err
	}
	b, err := a.Source.Desired(ctx, known, a.Wait)
	if err != nil {
		return fmt.Errorf("poll (known=%d): %w", known, err)
	}
	if b == nil {
		a.logger().Info("poll: no new revision", "revision", known)
		return nil
	}
	if b.Revision == a.lastFailed {
		// Revisions are immutable: a refused one stays refused. The API
		// answers at once while it is the newest, so hold here instead.
		a.logger().Info("poll: newest revision failed before; waiting for a newer one", "revision", b.Revision, "live", known)
		return a.sleep(ctx, a.Wait)
	}
	r := a.Applier.Apply(ctx, b)
	a.logApply(known, r)
	if r.State == client.StateFailed {
		a.lastFailed = r.Revision
	}
	a.pending = &r
	if err := a.flushReport(ctx); err != nil {
		return err
	}
	if r.State == client.StateFailed {
		return fmt.Errorf("revision %d: %w: %s", r.Revision, ErrApplyFailed, r.Message)
	}
	return nil
}

// flushReport sends the pending outcome, keeping it for the next cycle if
// the API does not take it.
func (a *Agent) flushReport(ctx context.Context) error {
	if a.pending == nil {
		return nil
	}
	if err := a.Reporter.Report(ctx, *a.pending); err != nil {
		return fmt.Errorf("report revision %d: %w", a.pending.Revision, err)
	}
	a.pending = nil
	return nil
}

func (a *Agent) logApply(known int64, r client.Report) {
	if r.State == client.StateApplied {
		a.logger().Info("apply: applied", "revision", r.Revision, "previous", known, "detail", r.Message)
		return
	}
	a.logger().Error("apply: failed", "revision", r.Revision, "live", known, "detail", r.Message)
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
