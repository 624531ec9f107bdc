package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/apiclient"
)

// fakeAPI records what the agent sent and answers with a canned response.
type fakeAPI struct {
	status int
	body   string

	gotAuth  string
	gotQuery string
	gotBody  string
	gotPath  string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.gotAuth = r.Header.Get("Authorization")
	f.gotQuery = r.URL.RawQuery
	f.gotPath = r.URL.Path
	b, _ := io.ReadAll(r.Body)
	f.gotBody = string(b)
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func newClient(t *testing.T, f *fakeAPI) *Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDesired(t *testing.T) {
	confirmBy := time.Date(2025, 3, 1, 12, 0, 10, 500_000_000, time.UTC)
	plain := Poll{Known: 6, Wait: 30 * time.Second}
	tests := []struct {
		name      string
		poll      Poll
		status    int
		body      string
		want      *Bundle
		wantErr   error
		wantQuery string
	}{
		{
			name:   "nothing new (204)",
			poll:   plain,
			status: http.StatusNoContent,
		},
		{
			name:   "new revision (200)",
			poll:   plain,
			status: http.StatusOK,
			body:   `{"revision": 7, "node": "lb1", "files": {"haproxy.cfg": "global\n"}, "confirm_by": null}`,
			want:   &Bundle{Revision: 7, Node: "lb1", Files: map[string]string{"haproxy.cfg": "global\n"}},
		},
		{
			name:   "revision awaiting confirmation carries its deadline",
			poll:   plain,
			status: http.StatusOK,
			body:   `{"revision": 7, "node": "lb1", "files": {}, "confirm_by": "2025-03-01T13:00:10.500000+01:00"}`,
			want:   &Bundle{Revision: 7, Node: "lb1", Files: map[string]string{}, ConfirmBy: &confirmBy},
		},
		{
			name:      "a node watching a deadline says so, and may ask for no wait",
			poll:      Poll{Known: 6, Awaiting: true},
			status:    http.StatusNoContent,
			wantQuery: "awaiting=1&known=6&wait=0",
		},
		{
			name:    "bad token (401)",
			poll:    plain,
			status:  http.StatusUnauthorized,
			body:    `{"detail": "bad token"}`,
			wantErr: ErrUnauthorized,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{status: tt.status, body: tt.body}
			got, err := newClient(t, f).Desired(context.Background(), tt.poll)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
				t.Errorf("bundle mismatch (-want +got):\n%s", diff)
			}
			if tt.wantQuery == "" {
				tt.wantQuery = "known=6&wait=30"
			}
			gotReq := []string{f.gotAuth, f.gotPath, f.gotQuery}
			wantReq := []string{"Node s3cret", "/api/v1/agent/desired/", tt.wantQuery}
			if diff := cmp.Diff(wantReq, gotReq); diff != "" {
				t.Errorf("request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredServerError(t *testing.T) {
	f := &fakeAPI{status: http.StatusBadGateway, body: "upstream down"}
	_, err := newClient(t, f).Desired(context.Background(), Poll{Wait: time.Second})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadGateway {
		t.Fatalf("error = %v, want StatusError 502", err)
	}
}

func TestReport(t *testing.T) {
	long := strings.Repeat("x", MaxMessageLen+100)
	tests := []struct {
		name    string
		status  int
		report  Report
		want    Report
		wantErr bool
	}{
		{
			name:   "applied",
			status: http.StatusNoContent,
			report: Report{Revision: 7, State: StateApplied, Message: "ok"},
			want:   Report{Revision: 7, State: StateApplied, Message: "ok"},
		},
		{
			name:   "long failure message is truncated",
			status: http.StatusNoContent,
			report: Report{Revision: 8, State: StateFailed, Message: long},
			want:   Report{Revision: 8, State: StateFailed, Message: Truncate(long, MaxMessageLen)},
		},
		{
			name:    "rejected",
			status:  http.StatusBadRequest,
			report:  Report{Revision: 9, State: StateApplied},
			want:    Report{Revision: 9, State: StateApplied},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{status: tt.status}
			err := newClient(t, f).Report(context.Background(), tt.report)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			var got Report
			if err := json.Unmarshal([]byte(f.gotBody), &got); err != nil {
				t.Fatalf("body %q: %v", f.gotBody, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("report body mismatch (-want +got):\n%s", diff)
			}
			if f.gotAuth != "Node s3cret" || f.gotPath != "/api/v1/agent/reports/" {
				t.Errorf("auth %q path %q", f.gotAuth, f.gotPath)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		send     NodeStatus
		wantBody string
		wantErr  error
	}{
		{
			name:   "networks and a refused scheduler",
			status: http.StatusNoContent,
			send: NodeStatus{
				Networks: []string{"10.0.0.1/24", "fd00::1/64"},
				IPVS: []IPVSStatus{{
					Key: "tcp 10.0.0.10:80", Name: "web", SchedulerWanted: "dllc", SchedulerInForce: "wlc",
					Message: "kernel refused scheduler dllc: no such scheduler",
				}},
			},
			wantBody: `{"networks":["10.0.0.1/24","fd00::1/64"],"ipvs":[{"key":"tcp 10.0.0.10:80","name":"web",` +
				`"scheduler_wanted":"dllc","scheduler_in_force":"wlc","message":"kernel refused scheduler dllc: no such scheduler"}],` +
				`"members":[],"vrrp":[]}`,
		},
		{
			name:   "a DLLC member: unknown figures are null",
			status: http.StatusNoContent,
			send: NodeStatus{Members: []MemberStatus{{
				Pool: "app", Member: "s1", Layer: "ipvs", Weight: ptr(3), Feed: "wlc weights",
				Message: "no fresh load: fulcrum-loadd has not answered yet",
			}}},
			wantBody: `{"networks":[],"ipvs":[],"members":[{"pool":"app","member":"s1","layer":"ipvs","load_milli":null,` +
				`"load_at":null,"connections":null,"weight":3,"feed":"wlc weights",` +
				`"message":"no fresh load: fulcrum-loadd has not answered yet"}],"vrrp":[]}`,
		},
		{
			name:   "a VRRP state",
			status: http.StatusNoContent,
			send: NodeStatus{VRRP: []VRRPStatus{
				{Group: "web", State: "master", Priority: 150, Since: ptr(time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC))},
				{Group: "db", State: "unknown", Priority: 100},
			}},
			wantBody: `{"networks":[],"ipvs":[],"members":[],"vrrp":[` +
				`{"group":"web","state":"master","priority":150,"since":"2026-11-22T10:00:00.123Z"},` +
				`{"group":"db","state":"unknown","priority":100,"since":null}]}`,
		},
		{
			name:     "nothing known: empty lists, not null",
			status:   http.StatusNoContent,
			wantBody: `{"networks":[],"ipvs":[],"members":[],"vrrp":[]}`,
		},
		{
			name:     "bad token",
			status:   http.StatusUnauthorized,
			wantBody: `{"networks":[],"ipvs":[],"members":[],"vrrp":[]}`,
			wantErr:  ErrUnauthorized,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{status: tt.status}
			err := newClient(t, f).Status(context.Background(), tt.send)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			got := []string{f.gotAuth, f.gotPath, f.gotBody}
			want := []string{"Node s3cret", "/api/v1/agent/status/", tt.wantBody}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[auth, path, body] mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusServerError(t *testing.T) {
	f := &fakeAPI{status: http.StatusInternalServerError, body: "boom"}
	err := newClient(t, f).Status(context.Background(), NodeStatus{})
	var se *StatusError
	if !errors.As(err, &se) || se.Op != "status" || se.Status != http.StatusInternalServerError {
		t.Fatalf("error = %v, want StatusError 500 from status", err)
	}
}

func TestSendEvents(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)
	f := &fakeAPI{status: http.StatusNoContent}
	c := newClient(t, f)
	err := c.SendEvents(context.Background(), []Event{
		{At: at, Group: "web", OldState: "backup", NewState: "master", Priority: 150, Reason: "no master"},
		{At: at, Group: "web", OldState: "master", NewState: "fault", Priority: 150, Reason: strings.Repeat("x", 600)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.gotPath != "/api/v1/agent/events/" || f.gotAuth != "Node s3cret" {
		t.Errorf("sent to %s with %q", f.gotPath, f.gotAuth)
	}
	var body struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal([]byte(f.gotBody), &body); err != nil {
		t.Fatalf("body %s: %v", f.gotBody, err)
	}
	want := map[string]any{"at": "2026-11-22T10:00:00.123Z", "group": "web", "old_state": "backup", "new_state": "master",
		"priority": 150.0, "reason": "no master"}
	if len(body.Events) != 2 {
		t.Fatalf("sent %d events, want 2: %s", len(body.Events), f.gotBody)
	}
	if diff := cmp.Diff(want, body.Events[0]); diff != "" {
		t.Errorf("first event mismatch (-want +got):\n%s", diff)
	}
	if r := body.Events[1]["reason"].(string); len([]rune(r)) != MaxReasonLen || !strings.HasSuffix(r, "[truncated]") {
		t.Errorf("long reason sent as %d runes, want it cut to %d", len([]rune(r)), MaxReasonLen)
	}

	if err := c.SendEvents(context.Background(), make([]Event, MaxEventsPerCall+1)); err == nil {
		t.Error("101 events in one call were accepted")
	}
	f.status = http.StatusServiceUnavailable
	var se *StatusError
	if err := c.SendEvents(context.Background(), []Event{{Group: "web"}}); !errors.As(err, &se) || se.Op != "events" || se.Status != 503 {
		t.Errorf("error = %v, want StatusError 503 from events", err)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want int // length in runes
	}{
		{in: "short", n: 100, want: 5},
		{in: strings.Repeat("é", 5000), n: 4000, want: 4000},
	}
	for _, tt := range tests {
		if got := len([]rune(Truncate(tt.in, tt.n))); got != tt.want {
			t.Errorf("Truncate(len %d, %d) has %d runes, want %d", len(tt.in), tt.n, got, tt.want)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, tt := range []struct{ url, token string }{
		{"ftp://x", "t"}, {"http://", "t"}, {"http://api", ""},
	} {
		if _, err := New(tt.url, tt.token); err == nil {
			t.Errorf("New(%q, %q) succeeded, want error", tt.url, tt.token)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestTelemetry(t *testing.T) {
	f := &fakeAPI{status: http.StatusNoContent}
	send := Telemetry{
		IntervalS: 10,
		Services:  []ServiceTelemetry{{Service: "web", Traffic: Traffic{Connections: 2, Requests: 30, Errors: 1, BytesIn: 900, BytesOut: 5000}}},
		Members: []MemberTelemetry{
			{
				Pool: "app", Member: "s1", Traffic: Traffic{Requests: 30, BytesIn: 900, BytesOut: 5000},
				Health: Health{Status: HealthDown, Check: "L4CON", Detail: "Layer4 connection problem", Code: nil, LatencyMS: ptr(0)},
			},
			{Pool: "app", Member: "s2", Health: Health{Status: HealthUp, Check: "L7OK", Code: ptr(200), LatencyMS: ptr(3)}},
		},
	}
	if err := newClient(t, f).Telemetry(context.Background(), send); err != nil {
		t.Fatal(err)
	}
	want := `{"interval_s":10,"services":[{"service":"web","connections":2,"requests":30,"errors":1,"bytes_in":900,"bytes_out":5000}],` +
		`"members":[{"pool":"app","member":"s1","connections":0,"requests":30,"errors":0,"bytes_in":900,"bytes_out":5000,` +
		`"health":{"status":"down","check":"L4CON","detail":"Layer4 connection problem","code":null,"latency_ms":0}},` +
		`{"pool":"app","member":"s2","connections":0,"requests":0,"errors":0,"bytes_in":0,"bytes_out":0,` +
		`"health":{"status":"up","check":"L7OK","detail":"","code":200,"latency_ms":3}}]}`
	got := []string{f.gotAuth, f.gotPath, f.gotBody}
	if diff := cmp.Diff([]string{"Node s3cret", "/api/v1/agent/telemetry/", want}, got); diff != "" {
		t.Errorf("[auth, path, body] mismatch (-want +got):\n%s", diff)
	}
}

func TestTelemetryLimits(t *testing.T) {
	f := &fakeAPI{status: http.StatusNoContent}
	many := make([]ServiceTelemetry, MaxTelemetryItems+5)
	long := Health{Status: HealthDown, Check: strings.Repeat("c", 40), Detail: strings.Repeat("é", 1500)}
	err := newClient(t, f).Telemetry(context.Background(), Telemetry{IntervalS: 10, Services: many, Members: []MemberTelemetry{{Health: long}}})
	if err != nil {
		t.Fatal(err)
	}
	var got Telemetry
	if err := json.Unmarshal([]byte(f.gotBody), &got); err != nil {
		t.Fatal(err)
	}
	h := got.Members[0].Health
	if len(got.Services) != MaxTelemetryItems || len(h.Check) != MaxCheckLen || len([]rune(h.Detail)) != MaxDetailLen {
		t.Errorf("sent %d services, check of %d, detail of %d runes; want %d, %d, %d",
			len(got.Services), len(h.Check), len([]rune(h.Detail)), MaxTelemetryItems, MaxCheckLen, MaxDetailLen)
	}
	if !strings.HasSuffix(h.Detail, "[truncated]") {
		t.Error("a cut detail should say so")
	}
	if strings.Contains(f.gotBody, `"services":null`) {
		t.Error("lists must never be null")
	}
}

func TestTelemetryEmptyListsAndErrors(t *testing.T) {
	f := &fakeAPI{status: http.StatusBadRequest, body: `{"members":["unknown field"]}`}
	err := newClient(t, f).Telemetry(context.Background(), Telemetry{IntervalS: 10})
	var se *StatusError
	if !errors.As(err, &se) || se.Op != "telemetry" || se.Status != http.StatusBadRequest || !strings.Contains(se.Body, "unknown field") {
		t.Fatalf("error = %v, want StatusError 400 from telemetry with the body", err)
	}
	if want := `{"interval_s":10,"services":[],"members":[]}`; f.gotBody != want {
		t.Errorf("body = %s, want %s", f.gotBody, want)
	}
}

// certPEM is the PEM of a TLS test server's own certificate.
func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func TestPinTrustsExactlyThePinnedCertificate(t *testing.T) {
	f := &fakeAPI{status: http.StatusNoContent}
	cluster := httptest.NewTLSServer(f)
	t.Cleanup(cluster.Close)
	// A machine in the middle: the same answers behind another certificate
	// (httptest's servers all share one, so this one makes its own).
	other := httptest.NewUnstartedServer(f)
	other.TLS = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	other.StartTLS()
	t.Cleanup(other.Close)

	for _, tt := range []struct {
		name   string
		url    string
		wantOK bool
	}{
		{"the pinned certificate", cluster.URL, true},
		{"another certificate", other.URL, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.gotAuth = ""
			c, err := New(tt.url, "s3cret")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Pin(certPEM(cluster)); err != nil {
				t.Fatal(err)
			}
			_, err = c.Desired(context.Background(), Poll{Known: 1, Wait: time.Second})
			if tt.wantOK && err != nil {
				t.Fatalf("Desired: %v", err)
			}
			if !tt.wantOK {
				if err == nil || !strings.Contains(err.Error(), "not the pinned one") {
					t.Fatalf("Desired: err = %v, want the pin refused", err)
				}
				if f.gotAuth != "" {
					t.Fatalf("the token reached a server with another certificate: %q", f.gotAuth)
				}
			}
		})
	}
	// Without a pin, the self-signed certificate is refused by the system's roots.
	c, _ := New(cluster.URL, "s3cret")
	if _, err := c.Desired(context.Background(), Poll{Known: 1, Wait: time.Second}); err == nil {
		t.Fatal("an unpinned client trusted a self-signed certificate")
	}
}

func TestPinRejectsBadInput(t *testing.T) {
	c, _ := New("http://api", "t")
	if err := c.Pin([]byte("x")); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("Pin on http: err = %v", err)
	}
	c, _ = New("https://api", "t")
	for _, bad := range []string{"", "not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"} {
		if err := c.Pin([]byte(bad)); err == nil {
			t.Errorf("Pin(%q) succeeded", bad)
		}
	}
}

// selfSigned is a new self-signed ECDSA certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "middle"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestBodiesAreTheSchemas sends every body the agent sends, each field set, and reads what
// reached the API into the request types generated from api/openapi.yaml, refusing unknown
// fields: a field the schema does not have, or of another type, fails here, and so does a
// field the generated type would drop (the round trip must give the same JSON).
func TestBodiesAreTheSchemas(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	load, n := int64(250), 3
	calls := []struct {
		name   string
		send   func(*Client) error
		schema any
	}{
		{"report", func(c *Client) error {
			return c.Report(context.Background(), Report{Revision: 7, State: StateFailed, Message: "haproxy -c said no"})
		}, &apiclient.AgentReportRequest{}},
		{"status", func(c *Client) error {
			return c.Status(context.Background(), NodeStatus{
				Networks:   []string{"10.0.0.1/24"},
				IPVS:       []IPVSStatus{{Key: "tcp:10.0.0.9:80", Name: "l4", SchedulerWanted: "dllc", SchedulerInForce: "wlc", Message: "no module"}},
				Members:    []MemberStatus{{Pool: "p", Member: "s1", Layer: "ipvs", LoadMilli: &load, LoadAt: &at, Connections: &n, Weight: &n, Feed: "ip_vs_dllc", Message: "ok"}},
				VRRP:       []VRRPStatus{{Group: "g", State: "master", Priority: 150, Since: &at}},
				Management: "master",
			})
		}, &apiclient.AgentStatusRequest{}},
		{"events", func(c *Client) error {
			return c.SendEvents(context.Background(), []Event{{At: at, Group: "g", OldState: "backup", NewState: "master", Priority: 150, Reason: "peer gone"}})
		}, &apiclient.AgentEventsRequest{}},
		{"daemon events", func(c *Client) error {
			return c.SendDaemonEvents(context.Background(), []DaemonEvent{{At: at, Daemon: "haproxy", Outcome: DaemonRestarted, Detail: "revision 7"}})
		}, &apiclient.AgentDaemonEventsRequest{}},
		{"telemetry", func(c *Client) error {
			traffic := Traffic{Connections: 1, Requests: 2, Errors: 3, BytesIn: 4, BytesOut: 5}
			return c.Telemetry(context.Background(), Telemetry{
				IntervalS: 10,
				Services:  []ServiceTelemetry{{Service: "web", Traffic: traffic}},
				Members: []MemberTelemetry{{Pool: "p", Member: "s1", Traffic: traffic,
					Health: Health{Status: HealthUp, Check: "L7OK", Detail: "200", Code: &n, LatencyMS: &n}}},
			})
		}, &apiclient.AgentTelemetryRequest{}},
	}
	for _, call := range calls {
		f := &fakeAPI{status: http.StatusOK, body: "{}"}
		if err := call.send(newClient(t, f)); err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		decoder := json.NewDecoder(strings.NewReader(f.gotBody))
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(call.schema); err != nil {
			t.Fatalf("%s: the body is not the schema's: %v\n%s", call.name, err, f.gotBody)
		}
		again, err := json.Marshal(call.schema)
		if err != nil {
			t.Fatal(err)
		}
		var sent, read any
		_ = json.Unmarshal([]byte(f.gotBody), &sent)
		_ = json.Unmarshal(again, &read)
		if diff := cmp.Diff(sent, read); diff != "" {
			t.Errorf("%s: the schema's type reads the body otherwise (-sent +read):\n%s", call.name, diff)
		}
	}
}
