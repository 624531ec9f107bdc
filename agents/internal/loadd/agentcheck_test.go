package loadd

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// meterWith returns a meter whose window holds one sample of load, taken
// now (so that servers, which read the real clock, find it fresh).
func meterWith(load float64) *Meter {
	m, _ := newTestMeter(&scriptedSource{results: gauges(load)}, 10*time.Second, time.Second)
	m.step(context.Background(), time.Now())
	return m
}

// meterWithout returns a meter that has no load (its source only failed).
func meterWithout() *Meter {
	m, _ := newTestMeter(&scriptedSource{results: []scripted{{err: errors.New("file missing")}}}, 10*time.Second, time.Second)
	m.step(context.Background(), time.Now())
	return m
}

// startAgent serves the agent-check for m on a real TCP socket on
// 127.0.0.1 until the test ends.
func startAgent(t *testing.T, m *Meter, allow *Allowlist) (string, *logBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := newTestLogger()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&AgentCheck{Meter: m, Allow: allow, Logger: logger}).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), logs
}

// agentExchange connects as HAProxy does, sends send (agent-send) if not
// empty, and reads until the agent closes.
func agentExchange(t *testing.T, addr, send string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if send != "" {
		if _, err := io.WriteString(conn, send); err != nil {
			t.Fatal(err)
		}
	}
	b, err := io.ReadAll(conn) // nil at a clean close (FIN), an error at a reset or timeout
	if err != nil {
		t.Fatalf("reading the reply: %v (after %q)", err, b)
	}
	return string(b)
}

// The reply is exactly "<dllc.AgentPercent>%\n": the worked example's
// loads 0.5, 0.3, 0.7 give 20 %, 33 %, 14 %.
func TestAgentCheckReply(t *testing.T) {
	for load, want := range map[float64]string{0.5: "20%\n", 0.3: "33%\n", 0.7: "14%\n", 0: "100%\n", 1: "10%\n", 25: "1%\n"} {
		addr, _ := startAgent(t, meterWith(load), nil)
		if got := agentExchange(t, addr, ""); got != want {
			t.Errorf("load %v: reply %q, want %q", load, got, want)
		}
	}
}

// What HAProxy sends with agent-send is read and ignored; the connection
// still ends with a clean close, not a reset.
func TestAgentCheckIgnoresAgentSend(t *testing.T) {
	addr, _ := startAgent(t, meterWith(0.5), nil)
	for _, send := range []string{"hello\n", "down\n", strings.Repeat("x", 10000)} {
		if got := agentExchange(t, addr, send); got != "20%\n" {
			t.Errorf("after sending %.10q: reply %q", send, got)
		}
	}
}

// Without a load the agent closes without a line: HAProxy keeps the weight.
func TestAgentCheckNoLoadNoReply(t *testing.T) {
	addr, _ := startAgent(t, meterWithout(), nil)
	if got := agentExchange(t, addr, "hello\n"); got != "" {
		t.Errorf("reply %q, want none", got)
	}
}

func TestAgentCheckAllowlist(t *testing.T) {
	local, _ := ParseAllowlist("127.0.0.1/32")
	addr, _ := startAgent(t, meterWith(0.3), local)
	if got := agentExchange(t, addr, ""); got != "33%\n" {
		t.Errorf("allowed client: reply %q", got)
	}
	elsewhere, _ := ParseAllowlist("192.0.2.0/24,2001:db8::/32")
	addr, logs := startAgent(t, meterWith(0.3), elsewhere)
	for range 3 {
		if got := agentExchange(t, addr, ""); got != "" {
			t.Errorf("refused client: reply %q, want none", got)
		}
	}
	if n := strings.Count(logs.String(), "refused a client outside --allow"); n != 1 {
		t.Errorf("3 refusals logged %d times, want once (rate-limited); logs:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "client=127.0.0.1") {
		t.Errorf("the refusal does not name the client; logs:\n%s", logs)
	}
}

func TestAgentCheckServeStopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logger, _ := newTestLogger()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&AgentCheck{Meter: meterWith(0.5), Logger: logger}).Serve(ctx, ln) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener is still open")
	}
}
