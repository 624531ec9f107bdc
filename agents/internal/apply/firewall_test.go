package apply

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// withFirewall returns files plus a firewall.nft opening port.
func withFirewall(files map[string]string, port string) map[string]string {
	return with(files, bundle.FirewallFile,
		"flush set inet fulcrum_firewall services4\nadd element inet fulcrum_firewall services4 { 10.0.0.10 . tcp . "+port+" }\n")
}

func TestApplyFirewall(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	v1 := withFirewall(cfgA, "80")
	v2 := withFirewall(cfgA, "8080")
	v2b := with(v2, bundle.MainFile, cfgB[bundle.MainFile])
	refused := errors.New("nft rejected the configuration:\nError: No such file or directory")
	tests := []struct {
		name      string
		live      map[string]string
		hap, fw   fakeDaemon
		unmanaged bool
		bundle    *client.Bundle
		wantCalls []string
		wantState client.State
		wantLive  map[string]string
		wantMsg   string
	}{
		{
			name: "first firewall.nft: loaded after haproxy is left alone",
			live: cfgA, hap: fakeDaemon{running: true},
			bundle:    newBundle(2, v1),
			wantCalls: []string{"firewall check", "firewall start"},
			wantState: client.StateApplied, wantLive: v1, wantMsg: "applied firewall.nft",
		},
		{
			name: "only firewall.nft changed: only the sets are reloaded",
			live: v1, hap: fakeDaemon{running: true}, fw: fakeDaemon{running: true},
			bundle:    newBundle(2, v2),
			wantCalls: []string{"firewall check", "firewall reload"},
			wantState: client.StateApplied, wantLive: v2,
		},
		{
			name: "only haproxy.cfg changed: the sets are left alone",
			live: v1, hap: fakeDaemon{running: true}, fw: fakeDaemon{running: true},
			bundle:    newBundle(2, with(v1, bundle.MainFile, cfgB[bundle.MainFile])),
			wantCalls: []string{"haproxy check", "haproxy reload"},
			wantState: client.StateApplied, wantLive: with(v1, bundle.MainFile, cfgB[bundle.MainFile]),
		},
		{
			name: "sets emptied meanwhile (baseline reloaded): loaded again with the next revision",
			live: v1, hap: fakeDaemon{running: true},
			bundle:    newBundle(2, with(v1, bundle.MainFile, cfgB[bundle.MainFile])),
			wantCalls: []string{"haproxy check", "firewall check", "haproxy reload", "firewall start"},
			wantState: client.StateApplied, wantLive: with(v1, bundle.MainFile, cfgB[bundle.MainFile]),
		},
		{
			name: "nft refuses: nothing reloaded, the last good set stays",
			live: v1, hap: fakeDaemon{running: true}, fw: fakeDaemon{running: true, checkErr: refused},
			bundle:    newBundle(2, v2b),
			wantCalls: []string{"haproxy check", "firewall check"},
			wantState: client.StateFailed, wantLive: v1, wantMsg: "No such file or directory",
		},
		{
			name: "loading the sets fails: haproxy and the sets back on last-good",
			live: v1, hap: fakeDaemon{running: true},
			fw:        fakeDaemon{running: true, reloadErrs: []error{errors.New("table replaced")}},
			bundle:    newBundle(2, v2b),
			wantCalls: []string{"haproxy check", "firewall check", "haproxy reload", "firewall reload", "haproxy reload", "firewall reload"},
			wantState: client.StateFailed, wantLive: v1, wantMsg: "firewall: table replaced",
		},
		{
			name: "a bundle without firewall.nft empties the sets",
			live: v1, hap: fakeDaemon{running: true}, fw: fakeDaemon{running: true},
			bundle:    newBundle(2, cfgA),
			wantCalls: []string{"firewall stop"},
			wantState: client.StateApplied, wantLive: cfgA, wantMsg: "removal of firewall.nft",
		},
		{
			name: "firewall not managed: the file is stored only",
			live: cfgA, hap: fakeDaemon{running: true}, unmanaged: true,
			bundle:    newBundle(2, v1),
			wantState: client.StateApplied, wantLive: v1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			hap, fw, journal := twoDaemons(tt.hap, tt.fw, "firewall")
			a := &Applier{Store: s, HAProxy: hap, Firewall: fw, Logger: slog.New(slog.DiscardHandler)}
			if tt.unmanaged {
				a.Firewall = nil
			}
			r := a.Apply(context.Background(), tt.bundle)
			checkApply(t, s, r, *journal, tt.wantCalls, tt.wantState, tt.wantLive, tt.wantMsg)
		})
	}
}

func TestResumeFirewall(t *testing.T) {
	cfgA := cfgOnly(readTestdata(t, "a.cfg"))
	tests := []struct {
		name      string
		live      map[string]string
		hap, fw   fakeDaemon
		wantCalls []string
	}{
		{name: "at start-up the live sets are loaded", live: withFirewall(cfgA, "80"), hap: fakeDaemon{running: true}, wantCalls: []string{"firewall start"}},
		{name: "already loaded: nothing to do", live: withFirewall(cfgA, "80"), hap: fakeDaemon{running: true}, fw: fakeDaemon{running: true}},
		{name: "no firewall.nft: nothing loaded", live: cfgA, hap: fakeDaemon{running: true}},
		{name: "after a reboot haproxy first", live: withFirewall(cfgA, "80"), wantCalls: []string{"haproxy start", "firewall start"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, tt.live, 1)
			hap, fw, journal := twoDaemons(tt.hap, tt.fw, "firewall")
			a := &Applier{Store: s, HAProxy: hap, Firewall: fw, Logger: slog.New(slog.DiscardHandler)}
			if err := a.Resume(context.Background()); err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if diff := cmp.Diff(tt.wantCalls, *journal, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
