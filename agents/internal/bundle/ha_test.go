package bundle

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contractHA is ha.json as the contract shows it.
const contractHA = `{
 "node": "lb1",
 "run_dir": "/run/fulcrum-agent/lb1",
 "fifo": "/run/fulcrum-agent/lb1/vrrp.fifo",
 "standby": false,
 "track_files": {"standby": "/run/fulcrum-agent/lb1/standby", "haproxy": "/run/fulcrum-agent/lb1/haproxy"},
 "groups": [
   {"name": "web", "vrid": 51, "interface": "eth0", "priority": 150, "advert_ms": 200,
    "vips": ["10.77.100.10/32"], "peers": ["10.77.1.4"], "witness": ""}
 ]
}`

func TestParseHA(t *testing.T) {
	want := HA{
		Node: "lb1", RunDir: "/run/fulcrum-agent/lb1", FIFO: "/run/fulcrum-agent/lb1/vrrp.fifo",
		TrackFiles: TrackFiles{Standby: "/run/fulcrum-agent/lb1/standby", HAProxy: "/run/fulcrum-agent/lb1/haproxy"},
		Groups: []HAGroup{{
			Name: "web", VRID: 51, Interface: "eth0", Priority: 150, AdvertMS: 200,
			VIPs: []string{"10.77.100.10/32"}, Peers: []string{"10.77.1.4"},
		}},
	}
	got, err := ParseHA(contractHA)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ha.json mismatch (-want +got):\n%s", diff)
	}
	noHAProxy := strings.Replace(contractHA, `, "haproxy": "/run/fulcrum-agent/lb1/haproxy"`, "", 1)
	if got, err := ParseHA(noHAProxy); err != nil || got.TrackFiles.HAProxy != "" {
		t.Errorf("without the haproxy track file: %+v, %v", got.TrackFiles, err)
	}
	vips, _ := got.Groups[0].Prefixes()
	if len(vips) != 1 || vips[0] != netip.MustParsePrefix("10.77.100.10/32") {
		t.Errorf("Prefixes = %v", vips)
	}
}

func TestParseHARefuses(t *testing.T) {
	tests := []struct {
		name, old, new, wantErr string
	}{
		{"not json", `"node": "lb1",`, `"node": "lb1"`, "invalid character"},
		{"unknown field", `"standby": false,`, `"standby": false, "sync": 1,`, `unknown field "sync"`},
		{"bad node", `"node": "lb1"`, `"node": "lb 1"`, `node "lb 1"`},
		{"relative run dir", `"run_dir": "/run/fulcrum-agent/lb1"`, `"run_dir": "run/lb1"`, "absolute, clean"},
		{"unclean run dir", `"run_dir": "/run/fulcrum-agent/lb1"`, `"run_dir": "/run/fulcrum-agent/../lb1"`, "absolute, clean"},
		{"fifo elsewhere", `"fifo": "/run/fulcrum-agent/lb1/vrrp.fifo"`, `"fifo": "/etc/vrrp.fifo"`, "fifo"},
		{"track file elsewhere", `"standby": "/run/fulcrum-agent/lb1/standby"`, `"standby": "/etc/shadow"`, "track_files.standby"},
		{"track file deeper", `"haproxy": "/run/fulcrum-agent/lb1/haproxy"`, `"haproxy": "/run/fulcrum-agent/lb1/x/haproxy"`, "track_files.haproxy"},
		{"no standby file", `"standby": "/run/fulcrum-agent/lb1/standby", `, ``, "track_files.standby"},
		{"vrid zero", `"vrid": 51`, `"vrid": 0`, "vrid 0"},
		{"vrid too big", `"vrid": 51`, `"vrid": 256`, "vrid 256"},
		{"interface option", `"interface": "eth0"`, `"interface": "-force"`, `interface "-force"`},
		{"interface too long", `"interface": "eth0"`, `"interface": "abcdefghijklmnop"`, "interface"},
		{"priority zero", `"priority": 150`, `"priority": 0`, "priority 0"},
		{"advert zero", `"advert_ms": 200`, `"advert_ms": 0`, "advert_ms 0"},
		{"bare vip", `"vips": ["10.77.100.10/32"]`, `"vips": ["10.77.100.10"]`, `vip "10.77.100.10"`},
		{"bad peer", `"peers": ["10.77.1.4"]`, `"peers": ["lb2"]`, `peer "lb2"`},
		{"bad witness", `"witness": ""`, `"witness": "10.0.0.300"`, `witness "10.0.0.300"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(contractHA, tt.old, tt.new, 1)
			if text == contractHA {
				t.Fatalf("%q is not in the fixture", tt.old)
			}
			_, err := ParseHA(text)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), HAFile+": ") {
				t.Errorf("error = %v, want one about %q", err, tt.wantErr)
			}
		})
	}
	twice := strings.Replace(contractHA, `"witness": ""}`, `"witness": ""}, {"name": "web", "vrid": 52, "interface": "eth0",
		"priority": 100, "advert_ms": 1000, "vips": [], "peers": [], "witness": "10.77.1.254"}`, 1)
	if _, err := ParseHA(twice); err == nil || !strings.Contains(err.Error(), `group "web" listed twice`) {
		t.Errorf("a group listed twice: %v", err)
	}
}
