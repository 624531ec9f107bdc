package haproxy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
)

func TestServerCommands(t *testing.T) {
	ready := bundle.Server{Backend: "pool-web", Server: "s1", Weight: 1, Admin: bundle.Ready}
	reweighted, maint, both := ready, ready, ready
	reweighted.Weight = 0
	maint.Admin = bundle.Maint
	both.Weight, both.Admin = 7, bundle.Maint
	tests := []struct {
		name   string
		change bundle.ServerChange
		want   []string
	}{
		{name: "weight", change: bundle.ServerChange{From: ready, To: reweighted}, want: []string{"set weight pool-web/s1 0"}},
		{name: "maint", change: bundle.ServerChange{From: ready, To: maint}, want: []string{"set server pool-web/s1 state maint"}},
		{name: "ready", change: bundle.ServerChange{From: maint, To: ready}, want: []string{"set server pool-web/s1 state ready"}},
		{
			name: "both", change: bundle.ServerChange{From: ready, To: both},
			want: []string{"set weight pool-web/s1 7", "set server pool-web/s1 state maint"},
		},
		{name: "nothing", change: bundle.ServerChange{From: ready, To: ready}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, serverCommands(tt.change)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
