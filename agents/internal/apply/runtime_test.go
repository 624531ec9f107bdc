package apply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
)

// TestRuntimePlan covers when a revision may skip the reload: only server
// weights and admin states may differ, as servers.json says.
func TestRuntimePlan(t *testing.T) {
	s1 := bundle.Server{Backend: "pool-web", Server: "s1", Weight: 1, Admin: bundle.Ready}
	s2 := bundle.Server{Backend: "pool-web", Server: "s2", Weight: 1, Admin: bundle.Ready}
	s1w0, s2maint := s1, s2
	s1w0.Weight, s2maint.Admin = 0, bundle.Maint
	live := map[string]string{
		bundle.MainFile:       "cfg weight 1 1",
		bundle.ServersFile:    serversJSON(t, "h1", s1, s2),
		"haproxy.d/hosts.map": "example.org pool-web\n",
	}
	loaded := State{Revision: 1, Files: Digests(live)}
	weights := with(live, bundle.MainFile, "cfg weight 0 1", bundle.ServersFile, serversJSON(t, "h1", s1w0, s2))
	tests := []struct {
		name    string
		state   State
		live    map[string]string
		next    map[string]string
		want    []bundle.ServerChange
		wantErr string
	}{
		{name: "weight change", state: loaded, live: live, next: weights, want: []bundle.ServerChange{{From: s1, To: s1w0}}},
		{
			name: "weight and admin changes", state: loaded, live: live,
			next: with(live, bundle.MainFile, "cfg 0 maint", bundle.ServersFile, serversJSON(t, "h1", s1w0, s2maint)),
			want: []bundle.ServerChange{{From: s1, To: s1w0}, {From: s2, To: s2maint}},
		},
		{
			name: "only the configuration's masked parts changed: nothing to send", state: loaded, live: live,
			next: with(live, bundle.MainFile, "# revision 2\ncfg weight 1 1"),
		},
		{name: "nothing live", state: State{}, next: weights, wantErr: "nothing is live yet"},
		{
			name: "live files not what the daemon loaded", state: State{Revision: 1, Files: Digests(weights)}, live: live,
			next: weights, wantErr: "not what the daemon loaded",
		},
		{
			name: "a map changed too", state: loaded, live: live,
			next: with(weights, "haproxy.d/hosts.map", "example.com pool-web\n"), wantErr: "haproxy.d/hosts.map differs",
		},
		{
			name: "a file added", state: loaded, live: live,
			next: with(weights, "haproxy.d/web.pem", "key"), wantErr: "haproxy.d/web.pem differs",
		},
		{
			name: "a file removed", state: loaded, live: live,
			next: without(weights, "haproxy.d/hosts.map"), wantErr: "haproxy.d/hosts.map differs",
		},
		{
			name: "no servers.json live (older bundle)", state: State{Files: Digests(without(live, bundle.ServersFile))},
			live: without(live, bundle.ServersFile), next: weights, wantErr: "no haproxy.d/servers.json",
		},
		{
			name: "no servers.json in the new bundle", state: loaded, live: live,
			next: without(weights, bundle.ServersFile), wantErr: "no haproxy.d/servers.json",
		},
		{
			name: "structure changed", state: loaded, live: live,
			next: with(weights, bundle.ServersFile, serversJSON(t, "h2", s1w0, s2)), wantErr: "structure changed",
		},
		{
			name: "server added under the same structure", state: loaded, live: live,
			next:    with(weights, bundle.ServersFile, serversJSON(t, "h1", s1, s2, bundle.Server{Backend: "pool-web", Server: "s3", Weight: 1, Admin: bundle.Ready})),
			wantErr: "server count changed",
		},
		{
			name: "malformed new servers.json", state: loaded, live: live,
			next: with(weights, bundle.ServersFile, `{"structure": "h1", "servers": [{"backend": "a b"}]}`), wantErr: "new haproxy.d/servers.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runtimePlan(tt.state, tt.live, tt.next)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func without(files map[string]string, name string) map[string]string {
	out := with(files)
	delete(out, name)
	return out
}
