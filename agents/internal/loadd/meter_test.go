package loadd

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"fulcrum/agents/internal/dllc"
)

// scriptedSource is a fake Source returning one result per call (the last
// one again once the script is done).
type scriptedSource struct {
	results []scripted
	calls   int
}

type scripted struct {
	sample Sample
	err    error
}

func (s *scriptedSource) Kind() string { return "file" }

func (s *scriptedSource) Sample(context.Context, time.Time) (Sample, error) {
	r := s.results[min(s.calls, len(s.results)-1)]
	s.calls++
	return r.sample, r.err
}

func gauges(loads ...float64) []scripted {
	var out []scripted
	for _, l := range loads {
		out = append(out, scripted{sample: gaugeSample(l)})
	}
	return out
}

// logBuffer collects a logger's output, safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newTestLogger() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func newTestMeter(src Source, window, every time.Duration) (*Meter, *logBuffer) {
	logger, logs := newTestLogger()
	return NewMeter(src, window, every, logger), logs
}

func wantMilli(t *testing.T, m *Meter, now time.Time, want int64) {
	t.Helper()
	l, err := m.Current(now)
	if err != nil {
		t.Fatalf("Current(%s): %v", now.Sub(t0), err)
	}
	if l.Milli != want {
		t.Errorf("Current(%s) = %d milli-loads, want %d", now.Sub(t0), l.Milli, want)
	}
}

// The window slides: samples older than the window leave it.
func TestMeterSlidingWindow(t *testing.T) {
	m, _ := newTestMeter(&scriptedSource{results: gauges(0.2, 0.4, 0.6, 0.8, 1.0, 3.0)}, time.Second, 250*time.Millisecond)
	for i, want := range []int64{200, 300, 400, 500} { // the mean of the samples so far
		m.step(context.Background(), at(250*i))
		wantMilli(t, m, at(250*i), want)
	}
	m.step(context.Background(), at(1000)) // 0.2 (at 0 ms) leaves: (0.4+0.6+0.8+1.0)/4
	wantMilli(t, m, at(1000), 700)
	m.step(context.Background(), at(1250)) // (0.6+0.8+1.0+3.0)/4: busy 0.85, waiting 0.5
	l, _ := m.Current(at(1250))
	if l.Milli != 1350 || l.Busy != 0.85 || l.Waiting != 0.5 || !l.MeasuredAt.Equal(at(1250)) {
		t.Errorf("load = %+v, want 1350 = busy 0.85 + waiting 0.5, measured at 1250 ms", l)
	}
}

// A counter source's first call is a baseline: nothing is answered until
// the second sample.
func TestMeterFirstValueAfterOneSample(t *testing.T) {
	src := &scriptedSource{results: []scripted{
		{}, // baseline
		{sample: Sample{Busy: 50, BusyOf: 100, Waiting: 0.25, WaitingOf: 1}},
	}}
	m, logs := newTestMeter(src, 2*time.Second, 250*time.Millisecond)
	if _, err := m.Current(at(0)); err == nil || err.Error() != "no load measured yet" {
		t.Fatalf("before any sample: err = %v", err)
	}
	m.step(context.Background(), at(0))
	if _, err := m.Current(at(0)); err == nil || err.Error() != "no load measured yet" {
		t.Fatalf("after the baseline: err = %v", err)
	}
	m.step(context.Background(), at(250))
	wantMilli(t, m, at(250), 750)
	if !strings.Contains(logs.String(), "first load measured") {
		t.Errorf("logs:\n%s", logs)
	}
}

// A failing source keeps the last load for one window after the last good
// sample, then the load is unknown; a recovered source starts afresh.
func TestMeterFailure(t *testing.T) {
	boom := errors.New("/run/load: no such file or directory")
	src := &scriptedSource{results: append(gauges(0.6), scripted{err: boom}, scripted{err: boom}, scripted{sample: gaugeSample(0.2)})}
	m, logs := newTestMeter(src, time.Second, 250*time.Millisecond)
	m.step(context.Background(), at(0))
	m.step(context.Background(), at(250)) // fails
	wantMilli(t, m, at(250), 600)
	wantMilli(t, m, at(1000), 600) // one window after the last good sample: still held
	if _, err := m.Current(at(1001)); err == nil ||
		err.Error() != "file source failing for 751ms: /run/load: no such file or directory" {
		t.Fatalf("after the window: err = %v", err)
	}
	m.step(context.Background(), at(1250)) // fails again, now stale
	m.step(context.Background(), at(1500)) // recovers: 0.6 at 0 ms is out of the window
	wantMilli(t, m, at(1500), 200)
	got := logs.String()
	for want, n := range map[string]int{"load source failing": 1, "load unknown": 1, "load source recovered": 1} {
		if c := strings.Count(got, want); c != n {
			t.Errorf("%q logged %d times, want %d; logs:\n%s", want, c, n, got)
		}
	}
}

func TestMeterFailingFromTheStart(t *testing.T) {
	m, _ := newTestMeter(&scriptedSource{results: []scripted{{err: errors.New("permission denied")}}}, time.Second, 250*time.Millisecond)
	m.step(context.Background(), at(0))
	if _, err := m.Current(at(0)); err == nil || err.Error() != "no load measured yet: permission denied" {
		t.Fatalf("err = %v", err)
	}
}

// A sampling loop that stopped (not a failing source) also makes the load
// unknown after the window.
func TestMeterNoSamples(t *testing.T) {
	m, _ := newTestMeter(&scriptedSource{results: gauges(0.3)}, time.Second, 250*time.Millisecond)
	m.step(context.Background(), at(0))
	if _, err := m.Current(at(1500)); err == nil || err.Error() != "no load measured for 1.5s" {
		t.Fatalf("err = %v", err)
	}
}

func TestWindowLoad(t *testing.T) {
	tests := []struct {
		name          string
		samples       []Sample
		milli         int64
		busy, waiting float64
	}{
		{name: "nothing to divide by", samples: []Sample{{Busy: 0, BusyOf: 0, Waiting: 3, WaitingOf: 0}}},
		{name: "counters over several samples", samples: []Sample{{Busy: 30, BusyOf: 100, Waiting: 1, WaitingOf: 10},
			{Busy: 50, BusyOf: 100, Waiting: 3, WaitingOf: 10}}, milli: 600, busy: 0.4, waiting: 0.2},
		{name: "busy over 1 (clock jitter) counts as 1", samples: []Sample{{Busy: 1.02, BusyOf: 1}}, milli: 1000, busy: 1},
		{name: "beyond the largest load", samples: []Sample{gaugeSample(1000), gaugeSample(1000), {Waiting: 5000, WaitingOf: 0}},
			milli: dllc.MaxLoad, busy: 1, waiting: 3499},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var timed []timedSample
			for _, s := range tt.samples {
				timed = append(timed, timedSample{at: t0, Sample: s})
			}
			l := windowLoad(timed, t0)
			if l.Milli != tt.milli || l.Busy != tt.busy || l.Waiting != tt.waiting {
				t.Errorf("windowLoad = %+v, want %d milli, busy %v, waiting %v", l, tt.milli, tt.busy, tt.waiting)
			}
		})
	}
}
