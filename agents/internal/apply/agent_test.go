package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// runAgent runs the loop until the source's script is exhausted and returns
// the sleeps it asked for.
func runAgent(t *testing.T, s Store, d *fakeDaemon, src *fakeSource, rep *fakeReporter) []time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	src.cancel = cancel
	var sleeps []time.Duration
	a := &Agent{
		Source:   src,
		Reporter: rep,
		Applier:  &Applier{Store: s, HAProxy: d},
		Wait:     30 * time.Second,
		Backoff:  Backoff{Min: time.Second, Max: 30 * time.Second},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sleep: func(_ context.Context, d time.Duration) error {
			sleeps = append(sleeps, d)
			return nil
		},
	}
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return sleeps
}

func TestAgent(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	down := sourceAnswer{err: errors.New("connection refused")}
	rev2 := sourceAnswer{bundle: newBundle(2, cfgOnly(cfgB))}
	bad3 := sourceAnswer{bundle: newBundle(3, cfgOnly("bogus"))}
	rev4 := sourceAnswer{bundle: newBundle(4, cfgOnly(cfgB))}
	// A track file the keepalived check writes, on a full /run.
	full := fmt.Errorf("track file: %w", &fs.PathError{Op: "open", Path: "/run/fulcrum-agent/lb1/standby", Err: syscall.ENOSPC})
	fullReport := client.Report{Revision: 2, State: client.StateFailed, Message: "no space left on device writing " +
		"/run/fulcrum-agent/lb1/standby (the node's disk is full): nothing was changed, the running configuration " +
		"keeps serving, and the agent tries this revision again until the disk takes writes"}
	tests := []struct {
		name        string
		answers     []sourceAnswer
		checkErr    error
		checkErrs   []error
		refuse      string
		reportFails int
		wantSleeps  []time.Duration
		wantCalls   []string
		wantReports []client.Report
		wantKnown   []int64
		wantLive    string
	}{
		{
			name:       "api down: capped exponential backoff, nothing touched",
			answers:    []sourceAnswer{down, down, down, down, down, down, down},
			wantSleeps: []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9, 30e9},
			wantKnown:  []int64{1, 1, 1, 1, 1, 1, 1, 1},
			wantLive:   cfgA,
		},
		{
			name:        "backoff resets after the api answers",
			answers:     []sourceAnswer{down, down, {}, down},
			wantSleeps:  []time.Duration{1e9, 2e9, 1e9},
			wantKnown:   []int64{1, 1, 1, 1, 1},
			wantLive:    cfgA,
			wantReports: nil,
		},
		{
			name:        "new revision applied once and reported",
			answers:     []sourceAnswer{rev2, {}},
			wantCalls:   []string{"check", "reload"},
			wantReports: []client.Report{{Revision: 2, State: client.StateApplied, Message: "applied haproxy.cfg"}},
			wantKnown:   []int64{1, 2, 2},
			wantLive:    cfgB,
		},
		{
			name:        "failed revision is reported once and not retried",
			answers:     []sourceAnswer{bad3, bad3, bad3},
			checkErr:    errors.New("unknown keyword 'bogus'"),
			wantSleeps:  []time.Duration{30e9, 30e9},
			wantCalls:   []string{"check"},
			wantReports: []client.Report{{Revision: 3, State: client.StateFailed, Message: "unknown keyword 'bogus'"}},
			wantKnown:   []int64{1, 3, 3, 3},
			wantLive:    cfgA,
		},
		{
			// It asks for a revision newer than the refused one, which the API
			// answers the moment it is published: no pause in between.
			name:      "a fix published after a failed revision applies at once",
			answers:   []sourceAnswer{bad3, rev4, {}},
			refuse:    "bogus",
			wantCalls: []string{"check", "check", "reload"},
			wantReports: []client.Report{
				{Revision: 3, State: client.StateFailed, Message: "unknown keyword 'bogus'"},
				{Revision: 4, State: client.StateApplied, Message: "applied haproxy.cfg"},
			},
			wantKnown: []int64{1, 3, 4, 4},
			wantLive:  cfgB,
		},
		{
			// The node's disk, not the revision, was at fault: the same
			// revision is tried again, after 1 s, then 2 s, until it applies.
			name:        "a revision the disk refused is tried again until it applies",
			answers:     []sourceAnswer{rev2, rev2, rev2, {}},
			checkErrs:   []error{full, full},
			wantSleeps:  []time.Duration{1e9, 2e9},
			wantCalls:   []string{"check", "check", "check", "reload"},
			wantReports: []client.Report{fullReport, fullReport, {Revision: 2, State: client.StateApplied, Message: "applied haproxy.cfg"}},
			wantKnown:   []int64{1, 1, 1, 2, 2},
			wantLive:    cfgB,
		},
		{
			name:        "a revision published while the disk refuses one is the one tried",
			answers:     []sourceAnswer{rev2, rev4, {}},
			checkErrs:   []error{full},
			wantSleeps:  []time.Duration{1e9},
			wantCalls:   []string{"check", "check", "reload"},
			wantReports: []client.Report{fullReport, {Revision: 4, State: client.StateApplied, Message: "applied haproxy.cfg"}},
			wantKnown:   []int64{1, 1, 4, 4},
			wantLive:    cfgB,
		},
		{
			name:        "report retried until the api takes it, without reapplying",
			answers:     []sourceAnswer{rev2, {}},
			reportFails: 2,
			wantSleeps:  []time.Duration{1e9, 2e9},
			wantCalls:   []string{"check", "reload"},
			wantReports: []client.Report{{Revision: 2, State: client.StateApplied, Message: "applied haproxy.cfg"}},
			wantKnown:   []int64{1, 2, 2},
			wantLive:    cfgB,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, cfgOnly(cfgA), 1)
			d := &fakeDaemon{running: true, checkErr: tt.checkErr, checkErrs: tt.checkErrs, refuse: tt.refuse}
			src := &fakeSource{answers: tt.answers}
			rep := &fakeReporter{failN: tt.reportFails}
			sleeps := runAgent(t, s, d, src, rep)
			live, err := s.Live()
			if err != nil {
				t.Fatal(err)
			}
			got := []any{sleeps, d.calls, rep.reports, src.known, live[bundle.MainFile]}
			want := []any{tt.wantSleeps, tt.wantCalls, tt.wantReports, tt.wantKnown, tt.wantLive}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[sleeps, daemon calls, reports, known, live] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 30 * time.Second}
	var got []time.Duration
	for range 8 {
		got = append(got, b.Next())
	}
	b.Reset()
	got = append(got, b.Next())
	want := []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9, 30e9, 30e9, 1e9}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
}

var errCannotBind = errors.New("cannot bind socket")

func TestHealStartsWhatDiedAndNothingElse(t *testing.T) {
	cfgA := cfgOnly(readTestdata(t, "a.cfg"))
	for _, tt := range []struct {
		name       string
		files      map[string]string
		hapRunning bool
		kaRunning  bool
		startErr   error
		wantStarts []Start
		wantCalls  [2][]string // haproxy's, keepalived's
	}{
		{name: "both run: nothing to do", files: layer4(cfgA, "vrrp_instance x {}\n"), hapRunning: true, kaRunning: true},
		{
			name: "haproxy died: started again", files: layer4(cfgA, "vrrp_instance x {}\n"), kaRunning: true,
			wantStarts: []Start{{Daemon: "haproxy"}}, wantCalls: [2][]string{{"start"}, nil},
		},
		{
			name: "both died: both started", files: layer4(cfgA, "vrrp_instance x {}\n"),
			wantStarts: []Start{{Daemon: "haproxy"}, {Daemon: "keepalived"}}, wantCalls: [2][]string{{"start"}, {"start"}},
		},
		{name: "keepalived not in the live set: left stopped", files: cfgA, hapRunning: true},
		{
			name: "a start that fails is said", files: cfgA, startErr: errCannotBind,
			wantStarts: []Start{{Daemon: "haproxy", Err: errCannotBind}}, wantCalls: [2][]string{{"start"}, nil},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hap := &fakeDaemon{running: tt.hapRunning, startErr: tt.startErr}
			ka := &fakeDaemon{running: tt.kaRunning}
			var told []string
			a := &Applier{
				Store: newStore(t, tt.files, 1), HAProxy: hap, Keepalived: ka,
				BeforeHeal: func(daemon string) { told = append(told, daemon) },
			}
			starts, err := a.Heal(context.Background())
			var stopped []string
			for _, s := range tt.wantStarts {
				stopped = append(stopped, s.Daemon)
			}
			if !cmp.Equal(told, stopped) {
				t.Errorf("BeforeHeal told %v, want each daemon found stopped first: %v", told, stopped)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []any{starts, [2][]string{hap.calls, ka.calls}}
			want := []any{tt.wantStarts, tt.wantCalls}
			if diff := cmp.Diff(want, got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("[starts, calls] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// eventSink keeps the events added.
type eventSink struct{ events []client.DaemonEvent }

func (s *eventSink) Add(events ...client.DaemonEvent) { s.events = append(s.events, events...) }

// TestSuperviseReportsEachRestartAndEachFailureOnce: a daemon started again
// is one event; a start that keeps failing the same way is one event, not
// one per pass; once it starts, that is one more.
func TestSuperviseReportsEachRestartAndEachFailureOnce(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hap := &fakeDaemon{}
	ka := &fakeDaemon{startErr: errCannotBind}
	sink := &eventSink{}
	a := &Agent{
		Applier:      &Applier{Store: newStore(t, layer4(cfgOnly(readTestdata(t, "a.cfg")), "vrrp_instance x {}\n"), 7), HAProxy: hap, Keepalived: ka},
		DaemonEvents: sink, Now: func() time.Time { return at },
	}
	var failing map[string]string
	for range 3 {
		failing = a.heal(context.Background(), failing)
	}
	ka.startErr = nil
	failing = a.heal(context.Background(), failing)
	a.heal(context.Background(), failing)
	restarted := "it had stopped; started it again from the live configuration (revision 7)"
	want := []client.DaemonEvent{
		{At: at, Daemon: "haproxy", Outcome: client.DaemonRestarted, Detail: restarted},
		{At: at, Daemon: "keepalived", Outcome: client.DaemonRestartFailed, Detail: "cannot bind socket"},
		{At: at, Daemon: "keepalived", Outcome: client.DaemonRestarted, Detail: restarted},
	}
	if diff := cmp.Diff(want, sink.events); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if got := len(ka.calls); got != 4 {
		t.Errorf("keepalived start attempts: %d, want 4 (one per pass until it ran)", got)
	}
}
