package loadd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// get requests path from handler over a real socket and returns the status,
// the Content-Type and the body.
func get(t *testing.T, handler http.Handler, method, path string) (int, string, string, http.Header) {
	t.Helper()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body), resp.Header
}

// GET /v1/load from a real file source: the field names the node agent
// parses, and values that agree with one another.
func TestHTTPLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "load")
	writeFile(t, path, "1.523\n")
	logger, _ := newTestLogger()
	m := NewMeter(&FileSource{Path: path}, 2*time.Second, 250*time.Millisecond, logger)
	before := time.Now()
	m.step(context.Background(), before)

	status, ctype, body, _ := get(t, NewHandler(m, nil, logger), "GET", "/v1/load")
	if status != http.StatusOK || ctype != "application/json" {
		t.Fatalf("status %d, Content-Type %q, body %s", status, ctype, body)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(body), &fields); err != nil {
		t.Fatal(err)
	}
	measuredAt, _ := fields["measured_at"].(string)
	delete(fields, "measured_at")
	want := map[string]any{"load_milli": 1523.0, "load": 1.523, "busy": 1.0, "waiting": 0.523,
		"agent_percent": 7.0, "source": "file", "window_ms": 2000.0}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	ts, err := time.Parse(time.RFC3339Nano, measuredAt)
	if err != nil || !strings.HasSuffix(measuredAt, "Z") || !ts.Equal(before) {
		t.Errorf("measured_at %q (%v): want %s in UTC", measuredAt, err, before.UTC().Format(time.RFC3339Nano))
	}
}

func TestHTTPErrors(t *testing.T) {
	logger, _ := newTestLogger()
	fine := NewHandler(meterWith(0.5), nil, logger)
	tests := []struct {
		name         string
		handler      http.Handler
		method, path string
		status       int
		body         string
	}{
		{"no load yet", NewHandler(meterWithout(), nil, logger), "GET", "/v1/load", 503,
			`{"error":"no load measured yet: file missing"}` + "\n"},
		{"other path", fine, "GET", "/v1/loads", 404, "404 page not found\n"},
		{"root", fine, "GET", "/", 404, "404 page not found\n"},
		{"other method", fine, "POST", "/v1/load", 405, "Method Not Allowed\n"},
		{"delete", fine, "DELETE", "/healthz", 405, "Method Not Allowed\n"},
		{"head", fine, "HEAD", "/v1/load", 200, ""},
		{"healthz", fine, "GET", "/healthz", 200, "ok\n"},
		{"healthz while the load is unknown", NewHandler(meterWithout(), nil, logger), "GET", "/healthz", 200, "ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body, header := get(t, tt.handler, tt.method, tt.path)
			if status != tt.status || body != tt.body {
				t.Errorf("%s %s = %d %q, want %d %q", tt.method, tt.path, status, body, tt.status, tt.body)
			}
			if status == 405 && header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow: %q", header.Get("Allow"))
			}
		})
	}
}

func TestHTTPAllowlist(t *testing.T) {
	logger, logs := newTestLogger()
	local, _ := ParseAllowlist("10.0.0.0/8, 127.0.0.0/8")
	if status, _, _, _ := get(t, NewHandler(meterWith(0.5), local, logger), "GET", "/v1/load"); status != 200 {
		t.Errorf("allowed client: status %d", status)
	}
	elsewhere, _ := ParseAllowlist("192.0.2.0/24")
	for _, path := range []string{"/v1/load", "/healthz", "/nowhere"} {
		if status, _, body, _ := get(t, NewHandler(meterWith(0.5), elsewhere, logger), "GET", path); status != 403 {
			t.Errorf("refused client, %s: status %d %q, want 403", path, status, body)
		}
	}
	if !strings.Contains(logs.String(), "refused a client outside --allow") {
		t.Errorf("no refusal logged:\n%s", logs)
	}
}

func TestParseAllowlist(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		allowed []string
		refused []string
	}{
		{in: "", want: "any", allowed: []string{"127.0.0.1", "2001:db8::1"}},
		{in: "10.1.2.3/8", want: "10.0.0.0/8", allowed: []string{"10.9.9.9", "::ffff:10.0.0.1"}, refused: []string{"11.0.0.1"}},
		{in: "192.0.2.7, 2001:db8::/32", want: "192.0.2.7/32,2001:db8::/32",
			allowed: []string{"192.0.2.7", "2001:db8:1::5"}, refused: []string{"192.0.2.8", "2001:db9::1"}},
	}
	for _, tt := range tests {
		a, err := ParseAllowlist(tt.in)
		if err != nil {
			t.Fatalf("ParseAllowlist(%q): %v", tt.in, err)
		}
		if a.String() != tt.want {
			t.Errorf("ParseAllowlist(%q) = %s, want %s", tt.in, a, tt.want)
		}
		for _, s := range tt.allowed {
			if !a.Allows(mustAddr(t, s)) {
				t.Errorf("%s refuses %s", a, s)
			}
		}
		for _, s := range tt.refused {
			if a.Allows(mustAddr(t, s)) {
				t.Errorf("%s allows %s", a, s)
			}
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "localhost", "10.0.0.0/8;"} {
		if _, err := ParseAllowlist(bad); err == nil {
			t.Errorf("ParseAllowlist(%q) succeeded", bad)
		}
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
