package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
)

// outcome is what an apply leaves behind, compared as a whole.
type outcome struct {
	Calls    []string
	State    client.State
	Revision int64
	Live     string
	LastGood string
	Staged   bool
}

func observe(t *testing.T, s Store, d *fakeDaemon, r client.Report) outcome {
	t.Helper()
	rev, err := s.Revision()
	if err != nil {
		t.Fatal(err)
	}
	live, _, _ := s.Live("haproxy.cfg")
	lastGood, _ := os.ReadFile(s.LastGoodPath("haproxy.cfg"))
	_, stagedErr := os.Stat(s.StagedPath("haproxy.cfg"))
	return outcome{
		Calls: d.calls, State: r.State, Revision: rev,
		Live: live, LastGood: string(lastGood), Staged: stagedErr == nil,
	}
}

func TestApply(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	tests := []struct {
		name    string
		live    string // live haproxy.cfg at revision 1; "" for none
		daemon  fakeDaemon
		bundle  *client.Bundle
		want    outcome
		wantMsg string
	}{
		{
			name:   "new revision is checked, swapped, reloaded",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: bundle(2, map[string]string{"haproxy.cfg": cfgB}),
			want: outcome{
				Calls: []string{"check haproxy.cfg.staged", "reload"},
				State: client.StateApplied, Revision: 2, Live: cfgB, LastGood: cfgA,
			},
		},
		{
			name:   "first revision starts the daemon",
			daemon: fakeDaemon{},
			bundle: bundle(1, map[string]string{"haproxy.cfg": cfgA}),
			want: outcome{
				Calls: []string{"check haproxy.cfg.staged", "start"},
				State: client.StateApplied, Revision: 1, Live: cfgA,
			},
		},
		{
			name:   "rejected config leaves live untouched",
			live:   cfgA,
			daemon: fakeDaemon{running: true, checkErr: errors.New("[ALERT] parsing [haproxy.cfg:3]: unknown keyword 'bogus'")},
			bundle: bundle(2, map[string]string{"haproxy.cfg": cfgB + "bogus\n"}),
			want: outcome{
				Calls: []string{"check haproxy.cfg.staged"},
				State: client.StateFailed, Revision: 1, Live: cfgA,
			},
			wantMsg: "unknown keyword 'bogus'",
		},
		{
			name:   "reload failure restores last-good and reloads it",
			live:   cfgA,
			daemon: fakeDaemon{running: true, reloadErrs: []error{errors.New("cannot bind socket [127.0.0.1:8080]")}},
			bundle: bundle(2, map[string]string{"haproxy.cfg": cfgB}),
			want: outcome{
				Calls: []string{"check haproxy.cfg.staged", "reload", "reload"},
				State: client.StateFailed, Revision: 1, Live: cfgA, LastGood: cfgA,
			},
			wantMsg: "cannot bind socket",
		},
		{
			name:   "failed first start removes the live file",
			daemon: fakeDaemon{startErr: errors.New("cannot bind socket")},
			bundle: bundle(1, map[string]string{"haproxy.cfg": cfgA}),
			want: outcome{
				Calls: []string{"check haproxy.cfg.staged", "start"},
				State: client.StateFailed,
			},
			wantMsg: "no previous configuration",
		},
		{
			name:   "same revision: no reload",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: bundle(1, map[string]string{"haproxy.cfg": cfgA}),
			want:   outcome{State: client.StateApplied, Revision: 1, Live: cfgA},
		},
		{
			name:   "new revision with identical files: recorded, no reload",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: bundle(5, map[string]string{"haproxy.cfg": cfgA}),
			want:   outcome{State: client.StateApplied, Revision: 5, Live: cfgA},
		},
		{
			name:    "path traversal refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  bundle(2, map[string]string{"haproxy.cfg": cfgB, "../haproxy.cfg": cfgB}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA},
			wantMsg: `refused file name "../haproxy.cfg"`,
		},
		{
			name:    "subdirectory refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  bundle(2, map[string]string{"conf.d/haproxy.cfg": cfgB}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA},
			wantMsg: "must be a plain file name",
		},
		{
			name:    "unknown file refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  bundle(2, map[string]string{"haproxy.cfg": cfgB, "keepalived.conf": "x"}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA},
			wantMsg: "not one of [haproxy.cfg]",
		},
		{
			name:    "missing file refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  bundle(2, map[string]string{}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA},
			wantMsg: "bundle lacks haproxy.cfg",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			d := tt.daemon
			a := &Applier{Store: s, Files: Files{"haproxy.cfg": &d}}
			r := a.Apply(context.Background(), tt.bundle)
			if diff := cmp.Diff(tt.want, observe(t, s, &d, r)); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
			if r.Revision != tt.bundle.Revision {
				t.Errorf("report revision = %d, want %d", r.Revision, tt.bundle.Revision)
			}
			if !strings.Contains(r.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", r.Message, tt.wantMsg)
			}
		})
	}
}

func TestResume(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	tests := []struct {
		name        string
		live        string // loaded at revision 1
		interrupted string // swapped in by an apply that never reloaded
		running     bool
		wantCalls   []string
		wantLive    string
	}{
		{name: "live config, daemon down: start", live: cfgA, wantCalls: []string{"start"}, wantLive: cfgA},
		{name: "live config, daemon up: leave it", live: cfgA, running: true, wantLive: cfgA},
		{name: "no live config: nothing to start"},
		{
			name: "interrupted apply is undone before starting", live: cfgA, interrupted: cfgB,
			wantCalls: []string{"start"}, wantLive: cfgA,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			if tt.interrupted != "" {
				if err := s.Stage("haproxy.cfg", tt.interrupted); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Swap("haproxy.cfg", Digest(tt.live)); err != nil {
					t.Fatal(err)
				}
			}
			d := &fakeDaemon{running: tt.running}
			a := &Applier{Store: s, Files: Files{"haproxy.cfg": d}}
			if err := a.Resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			live, _, _ := s.Live("haproxy.cfg")
			if diff := cmp.Diff([]any{tt.wantCalls, tt.wantLive}, []any{d.calls, live}); diff != "" {
				t.Errorf("[calls, live] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyAfterInterruptedApply: when the live file already holds the
// bundle but the daemon never loaded it, the apply must still reload.
func TestApplyAfterInterruptedApply(t *testing.T) {
	cfgA, cfgB := readTestdata(t, "a.cfg"), readTestdata(t, "b.cfg")
	s := newStore(t, cfgA, 1)
	if err := s.Stage("haproxy.cfg", cfgB); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Swap("haproxy.cfg", Digest(cfgA)); err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{running: true, reloadErrs: []error{errors.New("cannot bind")}}
	r := (&Applier{Store: s, Files: Files{"haproxy.cfg": d}}).Apply(context.Background(), bundle(2, map[string]string{"haproxy.cfg": cfgB}))
	// It reloads although the live file already holds the bundle, and the
	// rollback goes to what the daemon ran (A), not to the unloaded live file.
	want := outcome{
		Calls: []string{"check haproxy.cfg.staged", "reload", "reload"},
		State: client.StateFailed, Revision: 1, Live: cfgA, LastGood: cfgA,
	}
	if diff := cmp.Diff(want, observe(t, s, d, r)); diff != "" {
		t.Errorf("outcome mismatch (-want +got):\n%s\nmessage: %s", diff, r.Message)
	}
}
