package telemetry

import (
	"context"
	"log/slog"
	"math"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// DefaultInterval is how often telemetry is gathered and sent.
const DefaultInterval = 10 * time.Second

// The API's bounds on interval_s, and how often a persisting failure is
// logged again.
const (
	minIntervalS = 1
	maxIntervalS = 300
	logEvery     = time.Minute
)

// Sender sends telemetry; client.Client implements it.
type Sender interface {
	Telemetry(ctx context.Context, t client.Telemetry) error
}

// Reporter gathers telemetry every Interval and sends it. It runs apart
// from the apply loop and never waits on it. A sample the API does not
// take is dropped, not queued: the next one counts from the previous
// reading, so what the API misses is one interval's counts and nothing
// else. Failures are logged at most once a minute.
type Reporter struct {
	// Collector reads the daemons.
	Collector *Collector
	// Sender talks to the API.
	Sender Sender
	// Interval is the pace; zero means DefaultInterval.
	Interval time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now tells the time and Sleep waits d or until ctx ends; nil means
	// the real ones. Tests give a clock.Fake's.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	lastRead time.Time // of the previous reading the counts start from
	failing  bool      // since the last complete success
	loggedAt time.Time // when a failure was last logged
	missed   int       // failures since then
}

// Run sends at once, then every Interval on a steady beat until ctx ends.
// A step that overruns its beat skips the beats it missed. Each sample is
// dated by its beat, not by when the sleep ended, so that a late wake-up
// cannot put two samples in one of the API's buckets.
func (r *Reporter) Run(ctx context.Context) {
	interval := r.interval()
	next := r.now()
	for {
		r.step(ctx, next)
		now := r.now()
		next = next.Add(interval)
		for !next.After(now) {
			next = next.Add(interval)
		}
		if r.sleep(ctx, next.Sub(now)) != nil {
			return
		}
	}
}

// Step reads the daemons and sends what they counted since the previous
// Step. It gives up on a send that takes longer than an interval.
func (r *Reporter) Step(ctx context.Context) {
	r.step(ctx, r.now())
}

// step is Step for the reading dated now.
func (r *Reporter) step(ctx context.Context, now time.Time) {
	elapsed := now.Sub(r.lastRead)
	if r.lastRead.IsZero() || elapsed > maxIntervalS*time.Second {
		r.Collector.Reset() // first reading, or the previous is too old to count from
		elapsed = r.interval()
	}
	services, members, readErr := r.Collector.Collect(ctx)
	r.lastRead = now
	if readErr != nil {
		r.note("telemetry: cannot read a daemon; sending what the others counted", readErr)
	}
	t := client.Telemetry{
		IntervalS: intervalSeconds(elapsed), ReadAt: now.UTC().Truncate(time.Millisecond),
		Services: services, Members: members,
	}
	ctx, cancel := context.WithTimeout(ctx, r.interval())
	defer cancel()
	if err := r.Sender.Telemetry(ctx, t); err != nil {
		r.note("telemetry: not sent; this sample is dropped", err)
		return
	}
	if readErr == nil {
		r.recovered()
	}
	r.logger().Debug("telemetry sent", "interval_s", t.IntervalS, "services", len(services), "members", len(members))
}

// intervalSeconds rounds d to whole seconds within the API's bounds.
func intervalSeconds(d time.Duration) int {
	s := int(math.Round(d.Seconds()))
	return min(max(s, minIntervalS), maxIntervalS)
}

// note logs a failure, unless one was logged less than a minute ago: an
// API that is down for an hour costs sixty lines, not 360.
func (r *Reporter) note(what string, err error) {
	now := r.now()
	r.missed++
	if r.failing && now.Sub(r.loggedAt) < logEvery {
		return
	}
	r.logger().Warn(what, "err", err, "failures_since_last_log", r.missed)
	r.failing, r.loggedAt, r.missed = true, now, 0
}

// recovered logs once that a failure ended.
func (r *Reporter) recovered() {
	if r.failing {
		r.logger().Info("telemetry: sent again")
		r.failing, r.missed = false, 0
	}
}

func (r *Reporter) interval() time.Duration {
	if r.Interval > 0 {
		return r.Interval
	}
	return DefaultInterval
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reporter) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	return clock.Sleep(ctx, d)
}

func (r *Reporter) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
