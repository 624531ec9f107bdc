package haproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
)

// The fixtures are "show servers state" of a worker whose pool-web servers
// are: up; down (its check fails); maint (set at runtime); drained (weight
// 0 set at runtime); disabled (in the configuration); v6 (on ::1, down);
// and pool-unchecked/s1, without a health check.
func readStateFixture(t *testing.T, version string) savedState {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "show-servers-state-"+version+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	saved, err := parseServerState(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

func TestParseServerState(t *testing.T) {
	for _, version := range []string{"2.6", "3.0"} {
		t.Run(version, func(t *testing.T) {
			saved := readStateFixture(t, version)
			got := map[string]string{}
			for name, f := range saved {
				got[name] = strings.Join([]string{f["srv_addr"], f["srv_port"], f["srv_op_state"], f["srv_admin_state"],
					f["srv_uweight"], f["srv_iweight"], f["srv_check_state"]}, " ")
			}
			want := map[string]string{
				"pool-web/up":       "127.0.0.1 18081 2 0 3 3 6",
				"pool-web/down":     "127.0.0.1 18089 0 0 1 1 6",
				"pool-web/maint":    "127.0.0.1 18081 0 1 1 1 14",
				"pool-web/drained":  "127.0.0.1 18081 2 0 0 2 6",
				"pool-web/disabled": "127.0.0.1 18081 0 5 1 1 14",
				"pool-web/v6":       "::1 18083 0 0 1 1 6",
				"pool-unchecked/s1": "127.0.0.1 18081 2 0 1 1 0",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("addr port op admin uweight iweight check_state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseServerStateRefuses(t *testing.T) {
	header := "1\n# " + strings.Join(stateFields, " ") + "\n"
	tests := map[string]string{
		"empty":          "",
		"other version":  "2\n# be_id\n",
		"no header":      "1\n3 pool-web 1 s1\n",
		"missing field":  "1\n# be_id be_name srv_id srv_name\n",
		"short line":     header + "3 pool-web 1 s1 127.0.0.1 2\n",
		"error answered": "Unknown command.\n",
	}
	for name, text := range tests {
		if _, err := parseServerState(text); err == nil {
			t.Errorf("%s: parsed %q", name, text)
		}
	}
}

func TestNextServerState(t *testing.T) {
	saved := readStateFixture(t, "2.6")
	server := func(name, addr string, port, weight int) bundle.Server {
		return bundle.Server{Backend: "pool-web", Server: name, Address: addr, Port: port, Weight: weight, Admin: bundle.Ready, Checked: true}
	}
	disabled := server("disabled", "127.0.0.1", 18081, 1)
	disabled.Admin = bundle.Maint
	unchecked := server("s1", "127.0.0.1", 18081, 1)
	unchecked.Backend, unchecked.Checked = "pool-unchecked", false
	noEndpoint := server("up", "", 0, 3)
	tests := []struct {
		name   string
		server bundle.Server
		want   string // the line written, "" for none
	}{
		{
			name: "up stays up", server: server("up", "127.0.0.1", 18081, 3),
			want: "0 pool-web 0 up 127.0.0.1 2 0 3 3 2 6 3 3 0 0 0 0 - 18081 -",
		},
		{
			name: "down stays down", server: server("down", "127.0.0.1", 18089, 1),
			want: "0 pool-web 0 down 127.0.0.1 0 0 1 1 2 8 2 0 0 0 0 0 - 18089 -",
		},
		{
			name: "ipv6 down stays down", server: server("v6", "::1", 18083, 1),
			want: "0 pool-web 0 v6 ::1 0 0 1 1 1 8 2 0 0 0 0 0 - 18083 -",
		},
		{
			name: "a runtime weight gives way to the configured one", server: server("drained", "127.0.0.1", 18081, 2),
			want: "0 pool-web 0 drained 127.0.0.1 2 0 2 2 2 6 3 3 0 0 0 0 - 18081 -",
		},
		{
			name: "the configured weight changes", server: server("up", "127.0.0.1", 18081, 7),
			want: "0 pool-web 0 up 127.0.0.1 2 0 7 7 2 6 3 3 0 0 0 0 - 18081 -",
		},
		{
			name: "out of runtime maint: ready, down until checked", server: server("maint", "127.0.0.1", 18081, 1),
			want: "0 pool-web 0 maint 127.0.0.1 0 0 1 1 0 1 0 0 0 0 0 0 - 18081 -",
		},
		{
			name: "out of configured maint: down until checked", server: server("disabled", "127.0.0.1", 18081, 1),
			want: "0 pool-web 0 disabled 127.0.0.1 0 0 1 1 0 1 0 0 0 0 0 0 - 18081 -",
		},
		{
			name: "new: down until checked", server: server("fresh", "10.0.0.9", 80, 1),
			want: "0 pool-web 0 fresh 10.0.0.9 0 0 1 1 0 1 0 0 0 0 0 0 - 80 -",
		},
		{
			name: "moved to another port: down until checked", server: server("up", "127.0.0.1", 18082, 3),
			want: "0 pool-web 0 up 127.0.0.1 0 0 3 3 0 1 0 0 0 0 0 0 - 18082 -",
		},
		{
			name: "moved to another address: down until checked", server: server("down", "127.0.0.2", 18089, 1),
			want: "0 pool-web 0 down 127.0.0.2 0 0 1 1 0 1 0 0 0 0 0 0 - 18089 -",
		},
		{
			name: "checked from now on: down until checked", server: func() bundle.Server {
				s := unchecked
				s.Checked = true
				return s
			}(),
			want: "0 pool-unchecked 0 s1 127.0.0.1 0 0 1 1 0 1 0 0 0 0 0 0 - 18081 -",
		},
		{name: "maint by configuration: the configuration alone", server: disabled},
		{name: "no health check: the configuration alone", server: unchecked},
		{name: "endpoint unknown (an older servers.json): the configuration alone", server: noEndpoint},
	}
	header := "1\n# " + strings.Join(stateFields, " ") + "\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := header
			if tt.want != "" {
				want += tt.want + "\n"
			}
			if diff := cmp.Diff(want, nextServerState(saved, []bundle.Server{tt.server})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
