package telemetry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxytest"
	"fulcrum/agents/internal/telemetry"
)

// poolConfig renders a configuration named as the compiler names it: a
// frontend vs-web over backend pool-web with checked servers s1 and s2.
func poolConfig(port int, s1, s2, comment string) string {
	return fmt.Sprintf(`# %s
global
    master-worker
    stats socket "${FULCRUM_RUN_DIR}/haproxy.sock" mode 600 level admin expose-fd listeners

defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend vs-web
    bind 127.0.0.1:%d
    default_backend pool-web

backend pool-web
    balance roundrobin
    option httpchk
    http-check send meth GET uri /health ver HTTP/1.0
    default-server inter 200ms rise 1 fall 1
    server s1 %s check
    server s2 %s check
`, comment, port, s1, s2)
}

// TestHAProxyTelemetry runs the real HAProxy: the collected counts match
// the requests sent, across a reload too, and a stopped backend shows down
// with HAProxy's check word and the check's duration.
func TestHAProxyTelemetry(t *testing.T) {
	node := haproxytest.NewNode(t)
	m, applier, port, url := node.Manager, node.Applier, node.Port, node.URL
	a, b := haproxytest.BackendServer(t, "A"), haproxytest.BackendServer(t, "B")
	s1, s2 := strings.TrimPrefix(a.URL, "http://"), strings.TrimPrefix(b.URL, "http://")
	applyConfig := func(rev int64, comment string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		r := applier.Apply(ctx, &client.Bundle{Revision: rev, Files: map[string]string{bundle.MainFile: poolConfig(port, s1, s2, comment)}})
		if r.State != client.StateApplied {
			t.Fatalf("revision %d: %s: %s", rev, r.State, r.Message)
		}
	}
	applyConfig(1, "first")
	haproxytest.WaitFor(t, url, "A", 5*time.Second)

	c := &telemetry.Collector{Sources: []telemetry.Source{telemetry.HAProxy{Stats: m, Running: m.MasterAlive}}}
	collect := func() (client.ServiceTelemetry, map[string]client.MemberTelemetry) {
		t.Helper()
		services, members, err := c.Collect(context.Background())
		if err != nil || len(services) != 1 || len(members) != 2 {
			t.Fatalf("collect: %v; services %+v, members %+v", err, services, members)
		}
		byName := map[string]client.MemberTelemetry{}
		for _, m := range members {
			byName[m.Member] = m
		}
		return services[0], byName
	}
	send := func(n int) {
		t.Helper()
		for range n {
			if _, err := haproxytest.Get(url); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Until both servers' first checks ran (HAProxy spreads them).
	waitHealth := func(name, check string) client.Health {
		t.Helper()
		var h client.Health
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			_, members := collect()
			if h = members[name].Health; h.Check == check {
				return h
			}
		}
		t.Fatalf("%s health: %+v, want check %s", name, h, check)
		return h
	}
	waitHealth("s1", "L7OK")
	waitHealth("s2", "L7OK")
	const n = 40
	send(n)
	svc, members := collect()
	if svc.Service != "web" || svc.Requests != n || svc.Errors != 0 || svc.BytesIn == 0 || svc.BytesOut == 0 {
		t.Errorf("service: %+v, want web with %d requests, no errors, bytes both ways", svc, n)
	}
	if got := members["s1"].Requests + members["s2"].Requests; got != n || members["s1"].Requests != n/2 {
		t.Errorf("members counted %d and %d requests, want %d each", members["s1"].Requests, members["s2"].Requests, n/2)
	}
	for _, name := range []string{"s1", "s2"} {
		if h := members[name].Health; h.Status != client.HealthUp || h.Check != "L7OK" || h.Code == nil || *h.Code != 200 || h.LatencyMS == nil {
			t.Errorf("%s health: %+v, want up, L7OK, 200, a latency", name, h)
		}
	}

	// A reload: the new worker counts from 0, fewer than the old one had.
	applyConfig(2, "second")
	const afterReload = 6
	send(afterReload)
	if svc, _ = collect(); svc.Requests != afterReload {
		t.Errorf("after the reload counted %d requests, want %d", svc.Requests, afterReload)
	}

	// s2's backend stops: its check fails and it goes down.
	b.Close()
	h := waitHealth("s2", "L4CON")
	if h.Status != client.HealthDown || h.Check != "L4CON" || h.LatencyMS == nil || !strings.Contains(h.Detail, "Connection refused") {
		t.Errorf("stopped backend's health: %+v, want down, L4CON, a latency, a reason", h)
	}
	send(4)
	if svc, members = collect(); svc.Requests != 4 || members["s1"].Requests != 4 || members["s2"].Requests != 0 ||
		members["s1"].Health.Status != client.HealthUp {
		t.Errorf("with s2 down: service %d, s1 %d (%s), s2 %d requests; want 4, 4 (up), 0",
			svc.Requests, members["s1"].Requests, members["s1"].Health.Status, members["s2"].Requests)
	}
}
