package apply

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// t0 is when the confirm tests start; their revision 2 must be confirmed by
// t0 + 10 s, and the agent's grace is 10 s, so it goes back at t0 + 20 s.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const wentBack = "no contact with the API within 10 s after r2's confirm deadline"

// awaiting returns a bundle that must be confirmed by t0 + by.
func awaiting(rev int64, files map[string]string, by time.Duration) *client.Bundle {
	b := newBundle(rev, files)
	deadline := t0.Add(by)
	b.ConfirmBy = &deadline
	return b
}

// confirmRig is one agent with a fake clock, API and HAProxy.
type confirmRig struct {
	store  Store
	daemon *fakeDaemon
	clock  *fakeClock
	src    *fakeSource
	rep    *fakeReporter
}

func newConfirmRig(t *testing.T, s Store, d *fakeDaemon, at time.Time, answers []sourceAnswer, down *outage) *confirmRig {
	t.Helper()
	clk := &fakeClock{now: at}
	src := &fakeSource{answers: answers, clock: clk, outage: down}
	rep := &fakeReporter{down: func() bool { return down.on(clk.now) }}
	return &confirmRig{store: s, daemon: d, clock: clk, src: src, rep: rep}
}

// run runs the agent loop until the script of answers is exhausted.
func (r *confirmRig) run(t *testing.T) {
	t.Helper()
	// The poll's own deadlines are shorter than this one, which only ends a
	// run whose script never runs out.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.src.cancel = cancel
	a := &Agent{
		Source:       r.src,
		Reporter:     r.rep,
		Applier:      &Applier{Store: r.store, HAProxy: r.daemon},
		Wait:         30 * time.Second,
		Backoff:      Backoff{Min: time.Second, Max: 30 * time.Second},
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sleep:        r.clock.Sleep,
		Now:          r.clock.Now,
		ConfirmGrace: 10 * time.Second,
	}
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// confirmOutcome is what a confirm test compares as a whole.
type confirmOutcome struct {
	Polls    []client.Poll
	Sleeps   []time.Duration
	Calls    []string
	Reports  []client.Report
	Live     string
	Revision int64
	Watching bool // a watch is left in the state directory
}

func (r *confirmRig) outcome(t *testing.T) confirmOutcome {
	t.Helper()
	live, err := r.store.Live()
	if err != nil {
		t.Fatal(err)
	}
	rev, err := r.store.Revision()
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.store.Watch()
	if err != nil {
		t.Fatal(err)
	}
	return confirmOutcome{
		Polls: r.src.polls, Sleeps: r.clock.sleeps, Calls: r.daemon.calls, Reports: r.rep.reports,
		Live: live[bundle.MainFile], Revision: rev, Watching: w != nil,
	}
}

func TestAgentConfirmWatch(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	r2 := sourceAnswer{bundle: awaiting(2, cfgOnly(cfgB), 10*time.Second)}
	r3 := sourceAnswer{bundle: newBundle(3, cfgOnly(cfgA))} // the API's automatic rollback
	confirmed := sourceAnswer{bundle: newBundle(2, cfgOnly(cfgB))}
	poll := func(known int64, wait time.Duration) client.Poll {
		return client.Poll{Known: known, Wait: wait * time.Second}
	}
	watching := func(wait time.Duration) client.Poll {
		return client.Poll{Known: 2, Wait: wait * time.Second, Awaiting: true}
	}
	applied2 := client.Report{Revision: 2, State: client.StateApplied, Message: "applied haproxy.cfg"}
	back := []client.Report{
		{Revision: 2, State: client.StateFailed, Message: wentBack + ": went back to r1"},
		{Revision: 1, State: client.StateApplied, Message: "applied haproxy.cfg (went back from r2: " + wentBack + ")"},
	}
	applied3 := client.Report{Revision: 3, State: client.StateApplied, Message: "no file changed; no reload"}
	between := func(from, to time.Duration) *outage { return &outage{from: t0.Add(from), to: t0.Add(to)} }
	tests := []struct {
		name       string
		answers    []sourceAnswer
		outage     *outage
		checkErr   error
		reloadErrs []error
		want       confirmOutcome
	}{
		{
			name:    "the api answers at the deadline: nothing special, the api decides",
			answers: []sourceAnswer{r2, {took: 10 * time.Second}, {}},
			want: confirmOutcome{
				Polls:   []client.Poll{poll(1, 30), watching(10), poll(2, 30), poll(2, 30)},
				Calls:   []string{"check", "reload"},
				Reports: []client.Report{applied2},
				Live:    cfgB, Revision: 2,
			},
		},
		{
			name:    "the api refuses from before the deadline until past the grace: back to r1, told later, then r3",
			answers: []sourceAnswer{r2, {took: 5 * time.Second}, r3},
			outage:  between(5*time.Second, 40*time.Second),
			want: confirmOutcome{
				Polls: []client.Poll{
					poll(1, 30), watching(10), watching(5), watching(4), watching(2), watching(0), watching(0),
					poll(1, 30), poll(3, 30),
				},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 1e9, 2e9, 4e9, 8e9, 16e9},
				Calls:   []string{"check", "reload", "check", "reload"},
				Reports: append(append([]client.Report{applied2}, back...), applied3),
				Live:    cfgA, Revision: 3,
			},
		},
		{
			name:    "cut off right after the apply: the applied report is replaced by the failed one",
			answers: []sourceAnswer{{bundle: r2.bundle, took: time.Second}, r3},
			outage:  between(time.Second, 30*time.Second),
			want: confirmOutcome{
				Polls:   []client.Poll{poll(1, 30), poll(1, 30), poll(3, 30)},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 4e9, 1e9, 2e9, 4e9, 8e9},
				Calls:   []string{"check", "reload", "check", "reload"},
				Reports: append(back, applied3),
				Live:    cfgA, Revision: 3,
			},
		},
		{
			name:    "the api does not answer at all: the poll is cut when the grace runs out",
			answers: []sourceAnswer{r2, {took: time.Second}, r3},
			outage:  &outage{from: t0.Add(time.Second), to: t0.Add(40 * time.Second), hang: true},
			want: confirmOutcome{
				Polls:   []client.Poll{poll(1, 30), watching(10), watching(9), poll(1, 30), poll(3, 30)},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9},
				Calls:   []string{"check", "reload", "check", "reload"},
				Reports: append(append([]client.Report{applied2}, back...), applied3),
				Live:    cfgA, Revision: 3,
			},
		},
		{
			name:    "confirmed in time: the api says so at once, and a later outage changes nothing",
			answers: []sourceAnswer{r2, {bundle: confirmed.bundle, took: 3 * time.Second}, {}},
			outage:  between(3*time.Second, 60*time.Second),
			want: confirmOutcome{
				Polls: []client.Poll{
					poll(1, 30), watching(10), poll(2, 30), poll(2, 30), poll(2, 30), poll(2, 30), poll(2, 30),
					poll(2, 30), poll(2, 30), poll(2, 30),
				},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9},
				Calls:   []string{"check", "reload"},
				Reports: []client.Report{applied2},
				Live:    cfgB, Revision: 2,
			},
		},
		{
			name:    "confirmed after all while the node was cut off: back to r1, then r2 again",
			answers: []sourceAnswer{r2, {took: 5 * time.Second}, confirmed},
			outage:  between(5*time.Second, 40*time.Second),
			want: confirmOutcome{
				Polls: []client.Poll{
					poll(1, 30), watching(10), watching(5), watching(4), watching(2), watching(0), watching(0),
					poll(1, 30), poll(2, 30),
				},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 1e9, 2e9, 4e9, 8e9, 16e9},
				Calls:   []string{"check", "reload", "check", "reload", "check", "reload"},
				Reports: append(append([]client.Report{applied2}, back...), applied2),
				Live:    cfgB, Revision: 2,
			},
		},
		{
			name:    "a revision awaiting confirmation that changes nothing here is not watched",
			answers: []sourceAnswer{{bundle: awaiting(2, cfgOnly(cfgA), 10*time.Second)}, {took: time.Second}},
			outage:  between(time.Second, 40*time.Second),
			want: confirmOutcome{
				Polls: []client.Poll{
					poll(1, 30), poll(2, 30), poll(2, 30), poll(2, 30), poll(2, 30), poll(2, 30), poll(2, 30),
					poll(2, 30), poll(2, 30),
				},
				Sleeps:  []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9},
				Reports: []client.Report{{Revision: 2, State: client.StateApplied, Message: "no file changed; no reload"}},
				Live:    cfgA, Revision: 2,
			},
		},
		{
			name:     "a refused revision awaiting confirmation is not watched",
			answers:  []sourceAnswer{r2},
			checkErr: errors.New("unknown keyword 'bogus'"),
			want: confirmOutcome{
				// Then it asks for a revision newer than the refused one.
				Polls:   []client.Poll{poll(1, 30), poll(2, 30)},
				Calls:   []string{"check"},
				Reports: []client.Report{{Revision: 2, State: client.StateFailed, Message: "unknown keyword 'bogus'"}},
				Live:    cfgA, Revision: 1,
			},
		},
		{
			name:       "going back fails: r2 stays, and the report says so",
			answers:    []sourceAnswer{r2, {took: 5 * time.Second}, r3},
			outage:     between(5*time.Second, 40*time.Second),
			reloadErrs: []error{nil, errors.New("cannot bind socket")},
			want: confirmOutcome{
				Polls: []client.Poll{
					poll(1, 30), watching(10), watching(5), watching(4), watching(2), watching(0), watching(0),
					poll(2, 30), poll(3, 30),
				},
				Sleeps: []time.Duration{1e9, 2e9, 4e9, 8e9, 1e9, 2e9, 4e9, 8e9, 16e9},
				// r2; going back to r1 (refused, so r2 again); r3
				Calls: []string{"check", "reload", "check", "reload", "reload", "check", "reload"},
				Reports: []client.Report{applied2, {
					Revision: 2, State: client.StateApplied,
					Message: wentBack + ": going back to r1 failed, so r2 stays: reload failed, restored last-good configuration: cannot bind socket",
				}, {Revision: 3, State: client.StateApplied, Message: "applied haproxy.cfg"}},
				Live: cfgA, Revision: 3,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDaemon{running: true, checkErr: tt.checkErr, reloadErrs: tt.reloadErrs}
			rig := newConfirmRig(t, newStore(t, cfgOnly(cfgA), 1), d, t0, tt.answers, tt.outage)
			rig.run(t)
			if diff := cmp.Diff(tt.want, rig.outcome(t)); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAgentConfirmWatchSurvivesRestart(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	s := newStore(t, cfgOnly(cfgA), 1)
	first := newConfirmRig(t, s, &fakeDaemon{running: true}, t0,
		[]sourceAnswer{{bundle: awaiting(2, cfgOnly(cfgB), 10*time.Second)}}, nil)
	first.run(t)
	w, err := s.Watch()
	if err != nil {
		t.Fatal(err)
	}
	want := &Watch{Revision: 2, ConfirmBy: t0.Add(10 * time.Second), Previous: *newBundle(1, cfgOnly(cfgA))}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Fatalf("watch left for the next run (-want +got):\n%s", diff)
	}

	// The agent restarts past the grace, the API still out of reach: it
	// tries once, then goes back.
	later := t0.Add(25 * time.Second)
	second := newConfirmRig(t, s, &fakeDaemon{running: true}, later,
		[]sourceAnswer{{bundle: newBundle(3, cfgOnly(cfgA))}}, &outage{from: later, to: later.Add(2 * time.Second)})
	second.run(t)
	got := second.outcome(t)
	if diff := cmp.Diff([]client.Poll{{Known: 2, Awaiting: true}, {Known: 1, Wait: 30 * time.Second}, {Known: 3, Wait: 30 * time.Second}}, got.Polls); diff != "" {
		t.Errorf("polls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"check", "reload"}, got.Calls); diff != "" {
		t.Errorf("daemon calls (-want +got):\n%s", diff)
	}
	if len(got.Reports) != 3 || got.Reports[0].State != client.StateFailed || got.Reports[0].Revision != 2 {
		t.Errorf("reports = %+v, want r2 failed, r1 applied, r3 applied", got.Reports)
	}
	if got.Watching || got.Revision != 3 {
		t.Errorf("after the restart: revision %d, watching %v; want 3, false", got.Revision, got.Watching)
	}
}

func TestAgentDropsStaleWatch(t *testing.T) {
	cfgA := readTestdata(t, "a.cfg")
	s := newStore(t, cfgOnly(cfgA), 1)
	stale := &Watch{Revision: 7, ConfirmBy: t0, Previous: *newBundle(6, cfgOnly(cfgA))}
	if err := s.SetWatch(stale); err != nil {
		t.Fatal(err)
	}
	rig := newConfirmRig(t, s, &fakeDaemon{running: true}, t0.Add(time.Hour), []sourceAnswer{{}}, nil)
	rig.run(t)
	got := rig.outcome(t)
	if got.Watching || len(got.Calls) != 0 || got.Polls[0].Awaiting {
		t.Errorf("a watch about r7 while r1 runs: watching %v, calls %v, first poll %+v; want it dropped", got.Watching, got.Calls, got.Polls[0])
	}
}

func TestCeilSecond(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		0: 0, time.Nanosecond: time.Second, time.Second: time.Second, 1500 * time.Millisecond: 2 * time.Second,
		-500 * time.Millisecond: 0,
	} {
		if got := ceilSecond(d); got != want {
			t.Errorf("ceilSecond(%v) = %v, want %v", d, got, want)
		}
	}
}
