package apply

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// twoDaemons returns a fake HAProxy and a second fake unit named other
// (keepalived, the firewall) sharing a journal.
func twoDaemons(hap, second fakeDaemon, other string) (*fakeDaemon, *fakeDaemon, *[]string) {
	journal := &[]string{}
	hap.name, hap.journal = "haproxy", journal
	second.name, second.journal = other, journal
	return &hap, &second, journal
}

// checkApply compares an Apply's daemon calls, state and live set with
// the wanted ones, and its message with a wanted part.
func checkApply(t *testing.T, s Store, r Outcome, calls, wantCalls []string, wantState client.State,
	wantLive map[string]string, wantMsg string) {
	t.Helper()
	live, err := s.Live()
	if err != nil {
		t.Fatal(err)
	}
	got := []any{calls, r.State, live}
	want := []any{wantCalls, wantState, wantLive}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("[calls, state, live] mismatch (-want +got):\n%s\nmessage: %s", diff, r.Message)
	}
	if !strings.Contains(r.Message, wantMsg) {
		t.Errorf("message %q does not contain %q", r.Message, wantMsg)
	}
}

// layer4 returns files plus a keepalived part whose keepalived.conf is conf.
func layer4(files map[string]string, conf string) map[string]string {
	return with(files,
		bundle.KeepalivedFile, conf,
		bundle.IPVSFile, `{"services": []}`,
		bundle.NftFile, "table inet fulcrum\nflush table inet fulcrum\n")
}

func TestApplyKeepalived(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	l4v1 := layer4(cfgA, "virtual_server 10.0.0.10 80 {}\n")
	l4v2 := with(l4v1, bundle.KeepalivedFile, "virtual_server 10.0.0.11 80 {}\n")
	l4v2b := with(l4v2, bundle.MainFile, cfgB[bundle.MainFile])
	refused := errors.New("keepalived rejected the configuration: Unknown keyword 'bogus'")
	tests := []struct {
		name      string
		live      map[string]string // live set at revision 1; nil for none
		hap, ka   fakeDaemon
		unmanaged bool // no keepalived daemon
		bundle    *client.Bundle
		wantCalls []string
		wantState client.State
		wantLive  map[string]string
		wantMsg   string
	}{
		{
			name: "first layer-4 revision starts keepalived, haproxy untouched",
			live: cfgA, hap: fakeDaemon{running: true},
			bundle:    newBundle(2, l4v1),
			wantCalls: []string{"keepalived check", "keepalived start"},
			wantState: client.StateApplied, wantLive: l4v1,
			wantMsg: "applied keepalived.conf, keepalived.d/fulcrum.nft, keepalived.d/ipvs.json",
		},
		{
			name: "only keepalived.conf changed: only keepalived reloads",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, l4v2),
			wantCalls: []string{"keepalived check", "keepalived reload"},
			wantState: client.StateApplied, wantLive: l4v2,
		},
		{
			name: "only haproxy.cfg changed: keepalived not reloaded",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, with(l4v1, bundle.MainFile, cfgB[bundle.MainFile])),
			wantCalls: []string{"haproxy check", "haproxy reload"},
			wantState: client.StateApplied, wantLive: with(l4v1, bundle.MainFile, cfgB[bundle.MainFile]),
		},
		{
			name: "both changed: both checked before either reloads",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, l4v2b),
			wantCalls: []string{"haproxy check", "keepalived check", "haproxy reload", "keepalived reload"},
			wantState: client.StateApplied, wantLive: l4v2b,
		},
		{
			name: "keepalived refuses: not made live, nothing reloaded",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true, checkErr: refused},
			bundle:    newBundle(2, l4v2b),
			wantCalls: []string{"haproxy check", "keepalived check"},
			wantState: client.StateFailed, wantLive: l4v1,
			wantMsg: "Unknown keyword 'bogus'",
		},
		{
			name: "haproxy refuses: keepalived not even checked",
			live: l4v1, hap: fakeDaemon{running: true, checkErr: errors.New("haproxy rejected")}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, l4v2b),
			wantCalls: []string{"haproxy check"},
			wantState: client.StateFailed, wantLive: l4v1,
		},
		{
			name: "keepalived reload fails: last-good restored for both",
			live: l4v1, hap: fakeDaemon{running: true},
			ka:        fakeDaemon{running: true, reloadErrs: []error{errors.New("keepalived exited after SIGHUP")}},
			bundle:    newBundle(2, l4v2b),
			wantCalls: []string{"haproxy check", "keepalived check", "haproxy reload", "keepalived reload", "haproxy reload", "keepalived reload"},
			wantState: client.StateFailed, wantLive: l4v1,
			wantMsg: "restored last-good configuration: keepalived: keepalived exited after SIGHUP",
		},
		{
			name: "haproxy reload fails: keepalived untouched",
			live: l4v1, hap: fakeDaemon{running: true, reloadErrs: []error{errors.New("cannot bind")}}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, l4v2b),
			wantCalls: []string{"haproxy check", "keepalived check", "haproxy reload", "haproxy reload"},
			wantState: client.StateFailed, wantLive: l4v1,
		},
		{
			name: "keepalived.conf dropped: keepalived stopped",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true},
			bundle:    newBundle(2, cfgA),
			wantCalls: []string{"keepalived stop"},
			wantState: client.StateApplied, wantLive: cfgA,
			wantMsg: "applied the removal of keepalived.conf, keepalived.d/fulcrum.nft, keepalived.d/ipvs.json",
		},
		{
			name: "keepalived fails to stop: restored and reloaded",
			live: l4v1, hap: fakeDaemon{running: true}, ka: fakeDaemon{running: true, stopErr: errors.New("survived SIGKILL")},
			bundle:    newBundle(2, cfgA),
			wantCalls: []string{"keepalived stop", "keepalived reload"},
			wantState: client.StateFailed, wantLive: l4v1,
		},
		{
			name: "keepalived down with unchanged files: started with the new revision",
			live: l4v1, hap: fakeDaemon{running: true},
			bundle:    newBundle(2, with(l4v1, bundle.MainFile, cfgB[bundle.MainFile])),
			wantCalls: []string{"haproxy check", "keepalived check", "haproxy reload", "keepalived start"},
			wantState: client.StateApplied, wantLive: with(l4v1, bundle.MainFile, cfgB[bundle.MainFile]),
		},
		{
			name:   "first revision, keepalived fails to start: both stopped, nothing live",
			ka:     fakeDaemon{startErr: errors.New("keepalived exited at once")},
			bundle: newBundle(1, l4v1),
			wantCalls: []string{
				"haproxy check", "keepalived check", "haproxy start", "keepalived start", "haproxy stop", "keepalived stop",
			},
			wantState: client.StateFailed,
			wantMsg:   "no previous configuration",
		},
		{
			name: "keepalived not managed: its files are stored only",
			live: cfgA, hap: fakeDaemon{running: true}, unmanaged: true,
			bundle:    newBundle(2, l4v1),
			wantState: client.StateApplied, wantLive: l4v1,
			wantMsg: "keepalived is not managed by this agent",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			hap, ka, journal := twoDaemons(tt.hap, tt.ka, "keepalived")
			a := &Applier{Store: s, HAProxy: hap, Keepalived: ka, Logger: slog.New(slog.DiscardHandler)}
			if tt.unmanaged {
				a.Keepalived = nil
			}
			r := a.Apply(context.Background(), tt.bundle)
			checkApply(t, s, r, *journal, tt.wantCalls, tt.wantState, tt.wantLive, tt.wantMsg)
		})
	}
}

func TestResumeKeepalived(t *testing.T) {
	cfgA := cfgOnly(readTestdata(t, "a.cfg"))
	l4 := layer4(cfgA, "virtual_server 10.0.0.10 80 {}\n")
	tests := []struct {
		name      string
		live      map[string]string
		hap, ka   fakeDaemon
		unmanaged bool
		wantCalls []string
	}{
		{name: "after a reboot both start", live: l4, wantCalls: []string{"haproxy start", "keepalived start"}},
		{name: "keepalived died: started", live: l4, hap: fakeDaemon{running: true}, wantCalls: []string{"keepalived start"}},
		{name: "no keepalived.conf: not started", live: cfgA, wantCalls: []string{"haproxy start"}},
		{name: "keepalived not managed", live: l4, unmanaged: true, wantCalls: []string{"haproxy start"}},
		{
			name: "haproxy fails to start: keepalived still starts", live: l4, hap: fakeDaemon{startErr: errors.New("no")},
			wantCalls: []string{"haproxy start", "keepalived start"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			hap, ka, journal := twoDaemons(tt.hap, tt.ka, "keepalived")
			a := &Applier{Store: s, HAProxy: hap, Keepalived: ka, Logger: slog.New(slog.DiscardHandler)}
			if tt.unmanaged {
				a.Keepalived = nil
			}
			err := a.Resume(context.Background())
			if (err != nil) != (tt.hap.startErr != nil) {
				t.Errorf("Resume error = %v", err)
			}
			if diff := cmp.Diff(tt.wantCalls, *journal, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
