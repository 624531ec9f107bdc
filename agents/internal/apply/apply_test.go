package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// outcome is what an apply leaves behind, compared as a whole.
type outcome struct {
	Calls    []string
	State    client.State
	Revision int64
	Live     map[string]string
	LastGood map[string]string
	Sets     int  // file sets kept under bundles/
	Pending  bool // the runtime update mark is set
}

func observe(t *testing.T, s Store, d *fakeDaemon, r Outcome) outcome {
	t.Helper()
	rev, err := s.Revision()
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.Live()
	if err != nil {
		t.Fatal(err)
	}
	lastGood, err := s.LastGood()
	if err != nil {
		t.Fatal(err)
	}
	return outcome{
		Calls: d.calls, State: r.State, Revision: rev,
		Live: live, LastGood: lastGood, Sets: countSets(t, s), Pending: s.RuntimePending(),
	}
}

// pool renders a configuration with two servers in backend pool-web and
// the matching servers.json; the structure hash is a stand-in for the
// compiler's.
func pool(t *testing.T, structure string, w1, w2 int, admin2 bundle.Admin) map[string]string {
	t.Helper()
	cfg := readTestdata(t, "a.cfg") + fmt.Sprintf(
		"\nbackend pool-web\n    server s1 127.0.0.1:9011 weight %d\n    server s2 127.0.0.1:9012 weight %d%s\n",
		w1, w2, map[bundle.Admin]string{bundle.Maint: " disabled"}[admin2])
	return map[string]string{
		bundle.MainFile: cfg,
		bundle.ServersFile: serversJSON(t, structure,
			bundle.Server{Backend: "pool-web", Server: "s1", Weight: w1, Admin: bundle.Ready},
			bundle.Server{Backend: "pool-web", Server: "s2", Weight: w2, Admin: admin2}),
	}
}

func TestApply(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	withIncludes := with(cfgB, "haproxy.d/hosts.map", "example.org pool-web\n", "haproxy.d/ping.sh", "#!/bin/sh\n")
	poolV1 := pool(t, "h1", 1, 1, bundle.Ready)
	poolWeight := pool(t, "h1", 0, 1, bundle.Ready)
	poolWeightMaint := pool(t, "h1", 0, 1, bundle.Maint)
	poolRestructured := pool(t, "h2", 0, 1, bundle.Ready)
	bogus := errors.New("[ALERT] parsing [haproxy.cfg:3]: unknown keyword 'bogus'")
	tests := []struct {
		name    string
		live    map[string]string // live set at revision 1; nil for none
		daemon  fakeDaemon
		bundle  *client.Bundle
		want    outcome
		wantMsg string
	}{
		{
			name:   "new revision is checked, swapped, reloaded",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, cfgB),
			want: outcome{
				Calls: []string{"check", "reload"},
				State: client.StateApplied, Revision: 2, Live: cfgB, LastGood: cfgA, Sets: 2,
			},
			wantMsg: "applied haproxy.cfg",
		},
		{
			name:   "first revision starts the daemon",
			daemon: fakeDaemon{},
			bundle: newBundle(1, cfgA),
			want:   outcome{Calls: []string{"check", "start"}, State: client.StateApplied, Revision: 1, Live: cfgA, Sets: 1},
		},
		{
			name:    "rejected config leaves live untouched",
			live:    cfgA,
			daemon:  fakeDaemon{running: true, checkErr: bogus},
			bundle:  newBundle(2, with(cfgB, "haproxy.d/x.map", "x")),
			want:    outcome{Calls: []string{"check"}, State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: "unknown keyword 'bogus'",
		},
		{
			name:   "reload failure restores last-good and reloads it",
			live:   cfgA,
			daemon: fakeDaemon{running: true, reloadErrs: []error{errors.New("cannot bind socket [127.0.0.1:8080]")}},
			bundle: newBundle(2, with(cfgB, "haproxy.d/x.map", "x")),
			want: outcome{
				Calls: []string{"check", "reload", "reload"},
				State: client.StateFailed, Revision: 1, Live: cfgA, LastGood: cfgA, Sets: 1,
			},
			wantMsg: "cannot bind socket",
		},
		{
			name:    "failed first start removes the live set",
			daemon:  fakeDaemon{startErr: errors.New("cannot bind socket")},
			bundle:  newBundle(1, cfgA),
			want:    outcome{Calls: []string{"check", "start", "stop"}, State: client.StateFailed},
			wantMsg: "no previous configuration",
		},
		{
			name:    "same revision: no reload",
			live:    withIncludes,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(1, withIncludes),
			want:    outcome{State: client.StateApplied, Revision: 1, Live: withIncludes, Sets: 1},
			wantMsg: "no file changed; no reload",
		},
		{
			name:   "new revision with identical files: recorded, no reload",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(5, cfgA),
			want:   outcome{State: client.StateApplied, Revision: 5, Live: cfgA, Sets: 1},
		},
		{
			name:    "path traversal refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(2, with(cfgB, "../haproxy.cfg", "x")),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: `refused file name "../haproxy.cfg"`,
		},
		{
			name:    "other directory refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(2, map[string]string{"conf.d/haproxy.cfg": "x"}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: `refused file name "conf.d/haproxy.cfg"`,
		},
		{
			name:    "nested include refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(2, with(cfgB, "haproxy.d/certs/web.pem", "x")),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: "want haproxy.cfg, keepalived.conf, firewall.nft, haproxy.d/<leaf> or keepalived.d/<leaf>",
		},
		{
			name:    "unknown file refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(2, with(cfgB, "nginx.conf", "x")),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: `refused file name "nginx.conf"`,
		},
		{
			name:    "missing haproxy.cfg refused",
			live:    cfgA,
			daemon:  fakeDaemon{running: true},
			bundle:  newBundle(2, map[string]string{}),
			want:    outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1},
			wantMsg: "bundle lacks haproxy.cfg",
		},
		{
			name:   "include files go live with the configuration",
			live:   cfgA,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, withIncludes),
			want: outcome{
				Calls: []string{"check", "reload"},
				State: client.StateApplied, Revision: 2, Live: withIncludes, LastGood: cfgA, Sets: 2,
			},
			wantMsg: "applied haproxy.cfg, haproxy.d/hosts.map, haproxy.d/ping.sh",
		},
		{
			name:   "files the bundle no longer has leave the live set",
			live:   withIncludes,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, with(cfgB, "haproxy.d/ping.sh", "#!/bin/sh\nexit 0\n")),
			want: outcome{
				Calls: []string{"check", "reload"}, State: client.StateApplied, Revision: 2,
				Live: with(cfgB, "haproxy.d/ping.sh", "#!/bin/sh\nexit 0\n"), LastGood: withIncludes, Sets: 2,
			},
			wantMsg: "applied haproxy.d/ping.sh; removed haproxy.d/hosts.map",
		},
		{
			name:   "weight change goes through the runtime api without reload",
			live:   poolV1,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, poolWeight),
			want: outcome{
				Calls: []string{"set-servers 1 pool-web/s1=0/ready"},
				State: client.StateApplied, Revision: 2, Live: poolWeight, LastGood: poolV1, Sets: 2,
			},
			wantMsg: "applied at runtime without reload: 1 server change(s)",
		},
		{
			name:   "weight and maint changes together",
			live:   poolV1,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, poolWeightMaint),
			want: outcome{
				Calls: []string{"set-servers 2 pool-web/s1=0/ready pool-web/s2=1/maint"},
				State: client.StateApplied, Revision: 2, Live: poolWeightMaint, LastGood: poolV1, Sets: 2,
			},
			wantMsg: "applied at runtime without reload: 2 server change(s)",
		},
		{
			name:   "refused runtime command: reverted, then checked and reloaded",
			live:   poolV1,
			daemon: fakeDaemon{running: true, setServersErr: errors.New("set weight pool-web/s1 0: haproxy answered \"No such server.\"")},
			bundle: newBundle(2, poolWeight),
			want: outcome{
				Calls: []string{"set-servers 1 pool-web/s1=0/ready", "set-servers 1 pool-web/s1=1/ready", "check", "reload"},
				State: client.StateApplied, Revision: 2, Live: poolWeight, LastGood: poolV1, Sets: 2,
			},
			wantMsg: "the runtime update failed, so the revision was reloaded instead: set weight",
		},
		{
			name: "refused runtime command and refused check: the mark stays so that Resume reloads",
			live: poolV1,
			daemon: fakeDaemon{
				running: true, setServersErr: errors.New("set weight pool-web/s1 0: haproxy answered \"No such server.\""),
				checkErr: bogus,
			},
			bundle: newBundle(2, poolWeight),
			want: outcome{
				Calls: []string{"set-servers 1 pool-web/s1=0/ready", "set-servers 1 pool-web/s1=1/ready", "check"},
				State: client.StateFailed, Revision: 1, Live: poolV1, Sets: 1, Pending: true,
			},
			wantMsg: "unknown keyword 'bogus'",
		},
		{
			name:   "weight change while the daemon is down: started from the new files",
			live:   poolV1,
			daemon: fakeDaemon{},
			bundle: newBundle(2, poolWeight),
			want: outcome{
				Calls: []string{"check", "start"},
				State: client.StateApplied, Revision: 2, Live: poolWeight, LastGood: poolV1, Sets: 2,
			},
		},
		{
			name:   "structure changed: reload",
			live:   poolV1,
			daemon: fakeDaemon{running: true},
			bundle: newBundle(2, poolRestructured),
			want: outcome{
				Calls: []string{"check", "reload"},
				State: client.StateApplied, Revision: 2, Live: poolRestructured, LastGood: poolV1, Sets: 2,
			},
			wantMsg: "applied haproxy.cfg, haproxy.d/servers.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			d := tt.daemon
			a := &Applier{Store: s, HAProxy: &d}
			r := a.Apply(context.Background(), tt.bundle)
			if diff := cmp.Diff(tt.want, observe(t, s, &d, r), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
			if r.Revision != tt.bundle.Revision {
				t.Errorf("report revision = %d, want %d", r.Revision, tt.bundle.Revision)
			}
			if !strings.Contains(r.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", r.Message, tt.wantMsg)
			}
			if slices.Contains(d.calls, "check") && !maps.Equal(d.checked, tt.bundle.Files) {
				t.Errorf("the check saw %v, want the candidate set %v", slices.Sorted(maps.Keys(d.checked)), slices.Sorted(maps.Keys(tt.bundle.Files)))
			}
		})
	}
}

func TestResume(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	tests := []struct {
		name        string
		live        map[string]string // loaded at revision 1
		interrupted map[string]string // swapped in by an apply that never reloaded
		running     bool
		pending     bool // a runtime update was cut short
		wantCalls   []string
		wantLive    map[string]string
	}{
		{name: "live config, daemon down: start", live: cfgA, wantCalls: []string{"start"}, wantLive: cfgA},
		{name: "live config, daemon up: leave it", live: cfgA, running: true, wantLive: cfgA},
		{name: "no live config: nothing to start"},
		{
			name: "interrupted apply is undone before starting", live: cfgA, interrupted: with(cfgB, "haproxy.d/a.map", "x"),
			wantCalls: []string{"start"}, wantLive: cfgA,
		},
		{
			name: "interrupted apply is undone under a running daemon", live: cfgA, interrupted: cfgB, running: true,
			wantLive: cfgA,
		},
		{
			name: "interrupted runtime update: reload from the live files", live: cfgA, running: true, pending: true,
			wantCalls: []string{"reload"}, wantLive: cfgA,
		},
		{
			name: "interrupted runtime update and swap: back to last-good, then reload", live: cfgA, interrupted: cfgB,
			running: true, pending: true, wantCalls: []string{"reload"}, wantLive: cfgA,
		},
		{
			name: "interrupted runtime update, daemon down: the start loads the files", live: cfgA, pending: true,
			wantCalls: []string{"start"}, wantLive: cfgA,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			if tt.interrupted != nil {
				makeLive(t, s, 2, tt.interrupted)
			}
			if _, err := s.Stage(3, cfgB); err != nil { // a candidate left by a crash
				t.Fatal(err)
			}
			if err := s.SetRuntimePending(tt.pending); err != nil {
				t.Fatal(err)
			}
			d := &fakeDaemon{running: tt.running}
			a := &Applier{Store: s, HAProxy: d}
			if err := a.Resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			live, err := s.Live()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tt.wantCalls, tt.wantLive}, []any{d.calls, live}, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("[calls, live] mismatch (-want +got):\n%s", diff)
			}
			if s.RuntimePending() {
				t.Error("the runtime update mark survived Resume")
			}
			if n := countSets(t, s); n > 2 {
				t.Errorf("%d file sets left after resume, want at most live and last-good", n)
			}
		})
	}
}

// TestApplyAfterInterruptedApply: when the live set already holds the
// bundle but the daemon never loaded it, the apply must still reload, and
// roll back to what the daemon ran.
func TestApplyAfterInterruptedApply(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	s := newStore(t, cfgA, 1)
	makeLive(t, s, 2, cfgB)
	d := &fakeDaemon{running: true, reloadErrs: []error{errors.New("cannot bind")}}
	r := (&Applier{Store: s, HAProxy: d}).Apply(context.Background(), newBundle(2, cfgB))
	want := outcome{
		Calls: []string{"check", "reload", "reload"},
		State: client.StateFailed, Revision: 1, Live: cfgA, LastGood: cfgA, Sets: 1,
	}
	if diff := cmp.Diff(want, observe(t, s, d, r)); diff != "" {
		t.Errorf("outcome mismatch (-want +got):\n%s\nmessage: %s", diff, r.Message)
	}
}

func countSets(t *testing.T, s Store) int {
	t.Helper()
	sets, err := os.ReadDir(filepath.Join(s.Dir, bundlesDir))
	if err != nil {
		t.Fatal(err)
	}
	return len(sets)
}
