package loadd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"fulcrum/agents/internal/dllc"
)

// Load is a load measured over a window.
type Load struct {
	// Milli is busy + waiting in milli-loads (1000 = one fully busy
	// server), at most dllc.MaxLoad.
	Milli int64
	// Busy is the share of the CPU capacity used, 0 to 1.
	Busy float64
	// Waiting is how much work waited for a CPU, 0 and up.
	Waiting float64
	// MeasuredAt is when the window's newest sample was taken.
	MeasuredAt time.Time
}

// Meter samples a Source every interval and keeps the load over a sliding
// window of samples. A failing source keeps the last load for one window
// after the last good sample; then Current reports an error.
type Meter struct {
	source Source
	window time.Duration
	every  time.Duration
	logger *slog.Logger

	mu           sync.Mutex
	samples      []timedSample // the window, oldest first
	load         Load          // over samples; MeasuredAt zero until the first value
	err          error         // the source's last error, nil once it succeeds again
	failingSince time.Time
	staleLogged  bool
}

type timedSample struct {
	at time.Time
	Sample
}

// NewMeter returns a meter of src over window, sampled every interval.
func NewMeter(src Source, window, every time.Duration, logger *slog.Logger) *Meter {
	return &Meter{source: src, window: window, every: every, logger: logger}
}

// Source returns the meter's source.
func (m *Meter) Source() Source { return m.source }

// Window returns the length of the window.
func (m *Meter) Window() time.Duration { return m.window }

// Run samples at once, then every interval until ctx is done.
func (m *Meter) Run(ctx context.Context) {
	tick := time.NewTicker(m.every)
	defer tick.Stop()
	for {
		m.step(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Current returns the load over the window, or why there is none: nothing
// measured yet, or nothing measured for longer than the window (the source
// failing).
func (m *Meter) Current(now time.Time) (Load, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.load.MeasuredAt.IsZero() && m.err != nil:
		return Load{}, fmt.Errorf("no load measured yet: %w", m.err)
	case m.load.MeasuredAt.IsZero():
		return Load{}, errors.New("no load measured yet")
	case now.Sub(m.load.MeasuredAt) <= m.window:
		return m.load, nil
	case m.err != nil:
		return Load{}, fmt.Errorf("%s source failing for %s: %w", m.source.Kind(), roundDuration(now.Sub(m.failingSince)), m.err)
	default:
		return Load{}, fmt.Errorf("no load measured for %s", roundDuration(now.Sub(m.load.MeasuredAt)))
	}
}

// step takes one sample at now.
func (m *Meter) step(ctx context.Context, now time.Time) {
	s, err := m.source.Sample(ctx, now) // outside the lock: a command may take a while
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.fail(now, err)
		return
	}
	if m.err != nil {
		m.logger.Info("load source recovered", "source", m.source.Kind(), "failed_for", roundDuration(now.Sub(m.failingSince)))
		m.err, m.staleLogged = nil, false
	}
	if s.empty() {
		return
	}
	m.samples = append(m.samples, timedSample{at: now, Sample: s})
	for len(m.samples) > 0 && now.Sub(m.samples[0].at) >= m.window {
		m.samples = m.samples[1:]
	}
	first := m.load.MeasuredAt.IsZero()
	m.load = windowLoad(m.samples, now)
	if first {
		m.logger.Info("first load measured", "source", m.source.Kind(), "load_milli", m.load.Milli)
	}
}

// fail records a failed sample, logging each new error once and the moment
// the load becomes unknown.
func (m *Meter) fail(now time.Time, err error) {
	if m.err == nil {
		m.failingSince = now
	}
	if m.err == nil || m.err.Error() != err.Error() {
		m.logger.Warn("load source failing; the last load stands for one window", "source", m.source.Kind(),
			"err", err, "window", m.window)
	}
	m.err = err
	if !m.staleLogged && (m.load.MeasuredAt.IsZero() || now.Sub(m.load.MeasuredAt) > m.window) {
		m.logger.Error("load unknown: agent-check replies nothing and /v1/load answers 503 until the source recovers",
			"source", m.source.Kind(), "err", err)
		m.staleLogged = true
	}
}

// windowLoad sums the window's samples into a load.
func windowLoad(samples []timedSample, now time.Time) Load {
	var busy, busyOf, waiting, waitingOf float64
	for _, s := range samples {
		busy += s.Busy
		busyOf += s.BusyOf
		waiting += s.Waiting
		waitingOf += s.WaitingOf
	}
	l := Load{MeasuredAt: now}
	if busyOf > 0 {
		l.Busy = min(max(busy/busyOf, 0), 1)
	}
	if waitingOf > 0 {
		l.Waiting = max(waiting/waitingOf, 0)
	}
	l.Milli = min(int64(math.Round((l.Busy+l.Waiting)*dllc.FullLoad)), dllc.MaxLoad)
	return l
}

func roundDuration(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
