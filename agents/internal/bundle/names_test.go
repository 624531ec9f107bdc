package bundle

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckNames(t *testing.T) {
	long := strings.Repeat("a", 128)
	tests := []struct {
		name    string
		files   []string
		wantErr string
	}{
		{name: "main file only", files: []string{"haproxy.cfg"}},
		{name: "includes", files: []string{"haproxy.cfg", "haproxy.d/servers.json", "haproxy.d/web.pem", "haproxy.d/ping-check.sh", "haproxy.d/" + long}},
		{name: "main file missing", files: []string{"haproxy.d/servers.json"}, wantErr: "bundle lacks haproxy.cfg"},
		{name: "parent directory", files: []string{"haproxy.cfg", "../haproxy.cfg"}, wantErr: `refused file name "../haproxy.cfg"`},
		{name: "dot-dot leaf", files: []string{"haproxy.cfg", "haproxy.d/.."}, wantErr: `"haproxy.d/.."`},
		{name: "traversal through the include dir", files: []string{"haproxy.cfg", "haproxy.d/../x"}, wantErr: `"haproxy.d/../x"`},
		{name: "hidden leaf", files: []string{"haproxy.cfg", "haproxy.d/.hidden"}, wantErr: `"haproxy.d/.hidden"`},
		{name: "absolute", files: []string{"haproxy.cfg", "/etc/passwd"}, wantErr: `"/etc/passwd"`},
		{name: "deeper nesting", files: []string{"haproxy.cfg", "haproxy.d/certs/web.pem"}, wantErr: `"haproxy.d/certs/web.pem"`},
		{name: "other directory", files: []string{"haproxy.cfg", "conf.d/x.cfg"}, wantErr: `"conf.d/x.cfg"`},
		{name: "other top-level file", files: []string{"haproxy.cfg", "nginx.conf"}, wantErr: `"nginx.conf"`},
		{
			name:  "keepalived part",
			files: []string{"haproxy.cfg", "keepalived.conf", "keepalived.d/ipvs.json", "keepalived.d/fulcrum.nft", "keepalived.d/notify.sh"},
		},
		{name: "keepalived part without haproxy.cfg", files: []string{"keepalived.conf"}, wantErr: "bundle lacks haproxy.cfg"},
		{name: "traversal through keepalived.d", files: []string{"haproxy.cfg", "keepalived.d/../x"}, wantErr: `"keepalived.d/../x"`},
		{name: "keepalived.d nesting", files: []string{"haproxy.cfg", "keepalived.d/a/b"}, wantErr: `"keepalived.d/a/b"`},
		{name: "hidden keepalived.d leaf", files: []string{"haproxy.cfg", "keepalived.d/.x"}, wantErr: `"keepalived.d/.x"`},
		{name: "keepalived.conf in the wrong dir", files: []string{"haproxy.cfg", "haproxy.d/../keepalived.conf"}, wantErr: "refused file name"},
		{name: "firewall part", files: []string{"haproxy.cfg", "firewall.nft"}},
		{name: "firewall.nft in a directory", files: []string{"haproxy.cfg", "firewall.nft/x"}, wantErr: `"firewall.nft/x"`},
		{name: "a leaf without its directory", files: []string{"haproxy.cfg", "/firewall.nft"}, wantErr: `"/firewall.nft"`},
		{name: "a bare leaf", files: []string{"haproxy.cfg", "/x"}, wantErr: `"/x"`},
		{name: "backslash", files: []string{"haproxy.cfg", `haproxy.d\x`}, wantErr: `refused file name`},
		{name: "leaf too long", files: []string{"haproxy.cfg", "haproxy.d/" + long + "a"}, wantErr: "refused file name"},
		{name: "empty leaf", files: []string{"haproxy.cfg", "haproxy.d/"}, wantErr: `"haproxy.d/"`},
		{name: "the include dir itself", files: []string{"haproxy.cfg", "haproxy.d"}, wantErr: `"haproxy.d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "x"
			}
			err := CheckNames(files)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("CheckNames: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("CheckNames error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestMode(t *testing.T) {
	for name, want := range map[string]os.FileMode{
		"haproxy.cfg":            0o600,
		"haproxy.d/servers.json": 0o600,
		"haproxy.d/web.pem":      0o600,
		"haproxy.d/ping.sh":      0o700,
		"haproxy.d/sh":           0o600,
		"keepalived.conf":        0o600,
		"keepalived.d/ipvs.json": 0o600,
		"keepalived.d/check.sh":  0o700,
		"firewall.nft":           0o600,
	} {
		if got := Mode(name); got != want {
			t.Errorf("Mode(%q) = %o, want %o", name, got, want)
		}
	}
}

func TestParts(t *testing.T) {
	files := map[string]string{
		"haproxy.cfg": "h", "haproxy.d/a.map": "m", "keepalived.conf": "k", "keepalived.d/ipvs.json": "{}",
		"firewall.nft": "f",
	}
	got := map[string][]string{}
	for _, p := range Parts {
		for name := range p.Of(files) {
			got[p.Daemon] = append(got[p.Daemon], name)
		}
		slices.Sort(got[p.Daemon])
	}
	want := map[string][]string{
		"haproxy":    {"haproxy.cfg", "haproxy.d/a.map"},
		"keepalived": {"keepalived.conf", "keepalived.d/ipvs.json"},
		"firewall":   {"firewall.nft"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parts mismatch (-want +got):\n%s", diff)
	}
	if !KeepalivedPart.In(files) || KeepalivedPart.In(map[string]string{"keepalived.d/ipvs.json": "{}"}) {
		t.Error("KeepalivedPart.In must follow keepalived.conf")
	}
}
