package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIPVS(t *testing.T) {
	web := `{"key": "tcp 10.0.0.10:80", "protocol": "tcp", "address": "10.0.0.10", "port": 80, "fwmark": 0,
		"scheduler": "dllc", "keepalived_scheduler": "wlc"}`
	tests := []struct {
		name    string
		text    string
		want    IPVS
		wantErr string
	}{
		{
			name: "address service",
			text: `{"services": [` + web + `]}`,
			want: IPVS{Services: []IPVSService{{
				Key: "tcp 10.0.0.10:80", Protocol: "tcp", Address: "10.0.0.10", Port: 80,
				Scheduler: "dllc", KeepalivedScheduler: "wlc",
			}}},
		},
		{
			name: "mark service, inet6",
			text: `{"services": [{"key": "fwmark 7", "protocol": "udp", "family": "inet6", "address": "", "port": 0,
				"fwmark": 7, "scheduler": "sed", "keepalived_scheduler": "sed"}]}`,
			want: IPVS{Services: []IPVSService{{
				Key: "fwmark 7", Protocol: "udp", Family: "inet6", FWMark: 7, Scheduler: "sed", KeepalivedScheduler: "sed",
			}}},
		},
		{name: "no services", text: `{"services": []}`, want: IPVS{Services: []IPVSService{}}},
		{name: "not json", text: `{`, wantErr: "unexpected EOF"},
		{name: "unknown field", text: `{"services": [], "vrrp": 1}`, wantErr: `unknown field "vrrp"`},
		{name: "duplicate key", text: `{"services": [` + web + `,` + web + `]}`, wantErr: "listed twice"},
		{name: "empty key", text: svc(`"key": ""`), wantErr: "empty key"},
		{name: "bad protocol", text: svc(`"protocol": "sctp"`), wantErr: `protocol "sctp"`},
		{name: "bad address", text: svc(`"address": "10.0.0.300"`), wantErr: `address "10.0.0.300"`},
		{name: "port zero", text: svc(`"port": 0`), wantErr: "port 0"},
		{name: "port too big", text: svc(`"port": 65536`), wantErr: "port 65536"},
		{name: "family mismatch", text: svc(`"family": "inet6"`), wantErr: "does not match"},
		{name: "bad family", text: svc(`"family": "ipx"`), wantErr: `family "ipx"`},
		{name: "mark with an address", text: svc(`"fwmark": 3`), wantErr: "no address or port"},
		{name: "scheduler with a space", text: svc(`"scheduler": "w lc"`), wantErr: `scheduler "w lc"`},
		{name: "scheduler too long", text: svc(`"scheduler": "abcdefghijklmnop"`), wantErr: "scheduler"},
		{name: "empty keepalived scheduler", text: svc(`"keepalived_scheduler": ""`), wantErr: "keepalived_scheduler"},
		{
			name: "dllc feedback",
			text: svc(`"feedback": [{"pool": "p", "member": "r1", "address": "10.0.1.2", "port": 3334, "dest_port": 80, "weight": 2}]`),
			want: IPVS{Services: []IPVSService{{
				Key: "tcp 10.0.0.10:80", Protocol: "tcp", Address: "10.0.0.10", Port: 80,
				Scheduler: "dllc", KeepalivedScheduler: "wlc",
				Feedback: []DestFeedback{{
					Feedback: Feedback{Pool: "p", Member: "r1", Address: "10.0.1.2", Port: 3334}, DestPort: 80, Weight: 2,
				}},
			}}},
		},
		{
			name: "members",
			text: svc(`"health_check": "tcp", "members": [{"pool": "p", "member": "r1", "address": "10.0.1.2", "port": 80, "weight": 0, "sorry": false},
				{"pool": "p", "member": "b1", "address": "10.0.1.9", "port": 80, "weight": 1, "sorry": true}]`),
			want: IPVS{Services: []IPVSService{{
				Key: "tcp 10.0.0.10:80", Protocol: "tcp", Address: "10.0.0.10", Port: 80,
				Scheduler: "dllc", KeepalivedScheduler: "wlc", HealthCheck: "tcp",
				Members: []IPVSMember{
					{Pool: "p", Member: "r1", Address: "10.0.1.2", Port: 80},
					{Pool: "p", Member: "b1", Address: "10.0.1.9", Port: 80, Weight: 1, Sorry: true},
				},
			}}},
		},
		{name: "member address", text: svc(members(`"address": "r1.example"`)), wantErr: `members: r1: address "r1.example"`},
		{name: "member port", text: svc(members(`"port": 65536`)), wantErr: "port 65536"},
		{name: "member weight", text: svc(members(`"weight": -1`)), wantErr: "weight -1"},
		{name: "member name", text: svc(members(`"pool": ""`)), wantErr: "want names matching"},
		{name: "feedback address", text: svc(feedback(`"address": "r1.example"`)), wantErr: `feedback: address "r1.example"`},
		{name: "feedback port", text: svc(feedback(`"port": 0`)), wantErr: "feedback: port 0"},
		{name: "feedback dest port", text: svc(feedback(`"dest_port": 70000`)), wantErr: "dest_port 70000"},
		{name: "feedback name", text: svc(feedback(`"member": "r1\nx"`)), wantErr: "want names matching"},
		{name: "feedback weight", text: svc(feedback(`"weight": -1`)), wantErr: "weight -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIPVS(tt.text)
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

// svc renders ipvs.json with one valid address service whose field
// override replaces the default (JSON keeps the last duplicate).
func svc(override string) string {
	return `{"services": [{"key": "tcp 10.0.0.10:80", "protocol": "tcp", "address": "10.0.0.10", "port": 80,
		"fwmark": 0, "scheduler": "dllc", "keepalived_scheduler": "wlc", ` + override + `}]}`
}

// feedback is a feedback list with one valid entry whose field override
// replaces the default.
func feedback(override string) string {
	return `"feedback": [{"pool": "p", "member": "r1", "address": "10.0.1.2", "port": 3334, "dest_port": 80,
		"weight": 1, ` + override + `}]`
}

// members is a member list with one valid entry whose field override
// replaces the default.
func members(override string) string {
	return `"members": [{"pool": "p", "member": "r1", "address": "10.0.1.2", "port": 80, "weight": 1, "sorry": false, ` +
		override + `}]`
}

func TestAddressFamily(t *testing.T) {
	for _, tt := range []struct {
		svc  IPVSService
		want string
	}{
		{IPVSService{Address: "10.0.0.1"}, "inet"},
		{IPVSService{Address: "fd00::1"}, "inet6"},
		{IPVSService{FWMark: 1}, "inet"},
		{IPVSService{FWMark: 1, Family: "inet6"}, "inet6"},
	} {
		if got := tt.svc.AddressFamily(); got != tt.want {
			t.Errorf("%+v: AddressFamily() = %q, want %q", tt.svc, got, tt.want)
		}
	}
}

// The compiler's own output must parse: the golden ipvs.json files are the contract.
func TestParseIPVSAcceptsTheCompilersGoldenFiles(t *testing.T) {
	paths, err := filepath.Glob("../../../api/compiler/tests/golden/*/keepalived.d/ipvs.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden ipvs.json found (%v)", err)
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseIPVS(string(text))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, s := range v.Services {
			if s.Name == "" {
				t.Errorf("%s: service %q has no name", path, s.Key)
			}
		}
	}
}
