package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseServers(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    Servers
		wantErr string
	}{
		{
			name: "valid",
			text: `{"structure": "ab12", "servers": [{"backend": "pool-web", "server": "s1", "weight": 1, "admin": "ready"},
				{"backend": "pool-web", "server": "s2", "weight": 0, "admin": "maint"}]}`,
			want: Servers{Structure: "ab12", Servers: []Server{
				{Backend: "pool-web", Server: "s1", Weight: 1, Admin: Ready},
				{Backend: "pool-web", Server: "s2", Weight: 0, Admin: Maint},
			}},
		},
		{
			name: "endpoint and check",
			text: `{"structure": "a", "servers": [{"backend": "pool-web", "server": "s1", "weight": 1, "admin": "ready",
				"address": "2001:db8::2", "port": 8080, "checked": true}]}`,
			want: Servers{Structure: "a", Servers: []Server{{
				Backend: "pool-web", Server: "s1", Weight: 1, Admin: Ready, Address: "2001:db8::2", Port: 8080, Checked: true,
			}}},
		},
		{
			name: "bad address",
			text: `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "ready",
				"address": "web.example", "port": 80}]}`,
			wantErr: `b/s1: address "web.example"`,
		},
		{
			name: "address without port",
			text: `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "ready",
				"address": "10.0.0.1"}]}`,
			wantErr: "b/s1: port 0",
		},
		{name: "no servers", text: `{"structure": "ab12", "servers": []}`, want: Servers{Structure: "ab12", Servers: []Server{}}},
		{
			name: "dllc feedback",
			text: `{"structure": "a", "servers": [{"backend": "pool-web", "server": "s1", "weight": 256, "admin": "ready",
				"feedback": {"pool": "web", "member": "s1", "address": "2001:db8::2", "port": 3334}}]}`,
			want: Servers{Structure: "a", Servers: []Server{{
				Backend: "pool-web", Server: "s1", Weight: 256, Admin: Ready,
				Feedback: Feedback{Pool: "web", Member: "s1", Address: "2001:db8::2", Port: 3334},
			}}},
		},
		{
			name: "bad feedback",
			text: `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "ready",
				"feedback": {"pool": "web", "member": "s1", "address": "2001:db8::2", "port": 0}}]}`,
			wantErr: "b/s1: feedback: port 0",
		},
		{name: "not json", text: `structure`, wantErr: "invalid character"},
		{
			name: "a newer api's fields are left alone (a rolling upgrade)",
			text: `{"structure": "ab12", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "ready", "later": 1}], "extra": 1}`,
			want: Servers{Structure: "ab12", Servers: []Server{{Backend: "b", Server: "s1", Weight: 1, Admin: "ready"}}},
		},
		{name: "no structure", text: `{"servers": []}`, wantErr: "no structure hash"},
		{
			name:    "command smuggled in a name",
			text:    `{"structure": "a", "servers": [{"backend": "b; shutdown sessions", "server": "s1", "weight": 1, "admin": "ready"}]}`,
			wantErr: "servers/0: bad server name",
		},
		{
			name:    "weight out of range",
			text:    `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 257, "admin": "ready"}]}`,
			wantErr: "weight 257 out of 0..256",
		},
		{
			name:    "unknown admin",
			text:    `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "drain"}]}`,
			wantErr: `admin "drain"`,
		},
		{
			name: "duplicate",
			text: `{"structure": "a", "servers": [{"backend": "b", "server": "s1", "weight": 1, "admin": "ready"},
				{"backend": "b", "server": "s1", "weight": 2, "admin": "ready"}]}`,
			wantErr: "b/s1 listed twice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseServers(tt.text)
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
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffServers(t *testing.T) {
	s1 := Server{Backend: "pool-web", Server: "s1", Weight: 1, Admin: Ready}
	s2 := Server{Backend: "pool-web", Server: "s2", Weight: 1, Admin: Ready}
	s1w0 := Server{Backend: "pool-web", Server: "s1", Weight: 0, Admin: Ready}
	s2maint := Server{Backend: "pool-web", Server: "s2", Weight: 1, Admin: Maint}
	s3 := Server{Backend: "pool-web", Server: "s3", Weight: 1, Admin: Ready}
	table := func(structure string, servers ...Server) Servers {
		return Servers{Structure: structure, Servers: servers}
	}
	tests := []struct {
		name     string
		from, to Servers
		want     []ServerChange
		wantErr  string
	}{
		{name: "nothing changed", from: table("h", s1, s2), to: table("h", s1, s2)},
		{name: "order does not matter", from: table("h", s1, s2), to: table("h", s2, s1)},
		{
			name: "weight and admin changes", from: table("h", s1, s2), to: table("h", s1w0, s2maint),
			want: []ServerChange{{From: s1, To: s1w0}, {From: s2, To: s2maint}},
		},
		{name: "structure changed", from: table("h", s1, s2), to: table("k", s1w0, s2), wantErr: "structure changed"},
		{name: "server added", from: table("h", s1), to: table("h", s1, s2), wantErr: "server count changed"},
		{name: "server renamed", from: table("h", s1, s2), to: table("h", s1, s3), wantErr: "pool-web/s3 is new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DiffServers(tt.from, tt.to)
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
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRevert(t *testing.T) {
	a := Server{Backend: "b", Server: "s", Weight: 1, Admin: Ready}
	b := Server{Backend: "b", Server: "s", Weight: 0, Admin: Maint}
	if got := (ServerChange{From: a, To: b}).Revert(); got != (ServerChange{From: b, To: a}) {
		t.Errorf("Revert = %+v", got)
	}
}

// The compiler's own output must parse: the golden servers.json files are
// the contract.
func TestParseServersAcceptsTheCompilersGoldenFiles(t *testing.T) {
	paths, err := filepath.Glob("../../../api/compiler/tests/golden/*/haproxy.d/servers.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden servers.json found (%v)", err)
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseServers(string(text)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestFeedbackURL(t *testing.T) {
	for addr, want := range map[string]string{
		"10.0.1.2":    "http://10.0.1.2:3334/v1/load",
		"2001:db8::2": "http://[2001:db8::2]:3334/v1/load",
	} {
		if got := (Feedback{Address: addr, Port: 3334}).URL(); got != want {
			t.Errorf("URL(%s) = %s, want %s", addr, got, want)
		}
	}
}
