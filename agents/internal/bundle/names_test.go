package bundle

import (
	"os"
	"strings"
	"testing"
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
		{name: "other top-level file", files: []string{"haproxy.cfg", "keepalived.conf"}, wantErr: `"keepalived.conf"`},
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
	} {
		if got := Mode(name); got != want {
			t.Errorf("Mode(%q) = %o, want %o", name, got, want)
		}
	}
}
