package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
	"fulcrum/agents/internal/testlog"
)

// countingSource reports a frontend whose requests grow by 10 at each read.
type countingSource struct{ requests uint64 }

func (s *countingSource) Name() string { return "haproxy" }

func (s *countingSource) Read(context.Context) ([]Reading, error) {
	r := frontend(s.requests, 0, 1)
	s.requests += 10
	return []Reading{r}, nil
}

// fakeSender records what it is given; each send takes the time in took
// (one entry per send, 0 past the end) and fails while failing says so.
type fakeSender struct {
	clock   *clock.Fake
	took    []time.Duration
	failing func(i int) bool
	sent    []client.Telemetry
	stop    int // cancel after this many sends
	cancel  context.CancelFunc
}

func (f *fakeSender) Telemetry(_ context.Context, t client.Telemetry) error {
	i := len(f.sent)
	f.sent = append(f.sent, t)
	if i < len(f.took) {
		f.clock.Advance(f.took[i])
	}
	if len(f.sent) == f.stop {
		f.cancel()
	}
	if f.failing != nil && f.failing(i) {
		return errors.New("HTTP 503")
	}
	return nil
}

func newReporter(t *testing.T, sender *fakeSender, stop int) (*Reporter, context.Context, *testlog.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sender.clock, sender.cancel, sender.stop = clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), cancel, stop
	logs := &testlog.Buffer{}
	return &Reporter{
		Collector: &Collector{Sources: []Source{&countingSource{}}},
		Sender:    sender,
		Interval:  10 * time.Second,
		Logger:    slog.New(slog.NewTextHandler(logs, nil)),
		Now:       sender.clock.Now,
		Sleep:     sender.clock.Sleep,
	}, ctx, logs
}

func requests(sent []client.Telemetry) (intervals []int, counts []int64) {
	for _, t := range sent {
		intervals = append(intervals, t.IntervalS)
		counts = append(counts, t.Services[0].Requests)
	}
	return intervals, counts
}

// The first sample goes out at once with the gauges and no counts; then
// one every 10 s on a steady beat, whatever each send takes.
func TestReporterBeat(t *testing.T) {
	sender := &fakeSender{took: []time.Duration{300 * time.Millisecond, 1200 * time.Millisecond, 0, 4 * time.Second}}
	r, ctx, _ := newReporter(t, sender, 5)
	r.Run(ctx)
	want := []time.Duration{9700 * time.Millisecond, 8800 * time.Millisecond, 10 * time.Second, 6 * time.Second}
	if diff := cmp.Diff(want, sender.clock.Slept()); diff != "" {
		t.Errorf("sleeps mismatch (-want +got):\n%s", diff)
	}
	intervals, counts := requests(sender.sent)
	if diff := cmp.Diff([]int{10, 10, 10, 10, 10}, intervals); diff != "" {
		t.Errorf("interval_s mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0, 10, 10, 10, 10}, counts); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if sender.sent[0].Services[0].Connections != 1 {
		t.Error("the first sample must carry the gauges")
	}
}

// Each sample is dated by its beat, on the millisecond, though every sleep
// ends late and every send takes time: the API graphs each in its own
// 10-s bucket.
func TestReporterDatesSamplesByBeat(t *testing.T) {
	sender := &fakeSender{took: []time.Duration{300 * time.Millisecond, 2 * time.Second, 0, 4 * time.Second}}
	r, ctx, _ := newReporter(t, sender, 5)
	sleep := r.Sleep
	r.Sleep = func(ctx context.Context, d time.Duration) error { return sleep(ctx, d+1500*time.Millisecond+1234) }
	r.Run(ctx)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var got, want []time.Time
	for i, sent := range sender.sent {
		got = append(got, sent.ReadAt)
		want = append(want, start.Add(time.Duration(i)*10*time.Second))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read_at mismatch (-want +got):\n%s", diff)
	}
	if intervals, _ := requests(sender.sent); !slices.Equal(intervals, []int{10, 10, 10, 10, 10}) {
		t.Errorf("interval_s %v, want 10 each", intervals)
	}
}

// A send that overruns its beat (25 s from t=10s) skips the beats it
// missed (t=20s, t=30s), and the next sample, at t=40s, covers the 30 s
// since the previous reading.
func TestReporterOverrun(t *testing.T) {
	sender := &fakeSender{took: []time.Duration{0, 25 * time.Second}}
	r, ctx, _ := newReporter(t, sender, 4)
	r.Run(ctx)
	if diff := cmp.Diff([]time.Duration{10 * time.Second, 5 * time.Second, 10 * time.Second}, sender.clock.Slept()); diff != "" {
		t.Errorf("sleeps mismatch (-want +got):\n%s", diff)
	}
	intervals, counts := requests(sender.sent)
	if diff := cmp.Diff([]int{10, 10, 30, 10}, intervals); diff != "" {
		t.Errorf("interval_s mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0, 10, 10, 10}, counts); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

// While the API refuses, samples are dropped (the next one counts only
// its own interval) and the failure is logged once a minute; the recovery
// is logged once.
func TestReporterFailures(t *testing.T) {
	sender := &fakeSender{failing: func(i int) bool { return i >= 1 && i <= 12 }}
	r, ctx, logs := newReporter(t, sender, 15)
	r.Run(ctx)
	_, counts := requests(sender.sent)
	if counts[13] != 10 {
		t.Errorf("the first sample after the failures counted %d requests, want 10 (failed samples are dropped)", counts[13])
	}
	text := logs.String()
	if n := strings.Count(text, "telemetry: not sent"); n != 2 {
		t.Errorf("%d failure logs for 12 failures from t=10s to t=120s, want 2 (t=10s and t=70s):\n%s", n, text)
	}
	if !strings.Contains(text, "HTTP 503") || !strings.Contains(text, "failures_since_last_log=6") {
		t.Errorf("the logs should carry the error and how many failures went unlogged:\n%s", text)
	}
	if n := strings.Count(text, "telemetry: sent again"); n != 1 {
		t.Errorf("%d recovery logs, want 1:\n%s", n, text)
	}
}

// After a pause longer than the API takes (a suspended host), the counts
// start afresh rather than covering more than 300 s.
func TestReporterLongPause(t *testing.T) {
	sender := &fakeSender{took: []time.Duration{0, 0, 10 * time.Minute}}
	r, ctx, _ := newReporter(t, sender, 5)
	r.Run(ctx)
	intervals, counts := requests(sender.sent)
	if diff := cmp.Diff([]int{10, 10, 10, 10, 10}, intervals); diff != "" {
		t.Errorf("interval_s mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0, 10, 10, 0, 10}, counts); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

func TestIntervalSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{
		10*time.Second + 400*time.Millisecond: 10, 9500 * time.Millisecond: 10, 200 * time.Millisecond: 1,
		0: 1, 301 * time.Second: 300,
	} {
		if got := intervalSeconds(d); got != want {
			t.Errorf("intervalSeconds(%s) = %d, want %d", d, got, want)
		}
	}
}
