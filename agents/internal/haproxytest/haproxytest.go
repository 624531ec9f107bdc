// Package haproxytest holds helpers for tests that run the real HAProxy:
// backends answering their own name, test configurations, and a traffic
// generator that opens a new connection for every request.
package haproxytest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/haproxy"
)

// Binary returns the path of haproxy, or fails the test when it is missing:
// a skip would let CI pass without the real-daemon tests having run.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatalf("haproxy is not on PATH; install it (make deps) to run the real-daemon tests")
	}
	return path
}

// Backend starts an HTTP server on 127.0.0.1 answering name to every
// request and returns its host:port.
func Backend(t testing.TB, name string) string {
	t.Helper()
	return strings.TrimPrefix(BackendServer(t, name).URL, "http://")
}

// BackendServer is Backend's server, for a test that stops it (Close) to
// make the backend fail.
func BackendServer(t testing.TB, name string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, name)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Node is one real HAProxy run through the agent's apply logic, listening
// (once a configuration is applied) on Port.
type Node struct {
	Manager *haproxy.Manager
	Applier *apply.Applier
	URL     string
	Port    int
}

// NewNode prepares a state dir and stops every HAProxy it starts when the
// test ends, whatever the outcome.
func NewNode(t testing.TB, execPrefix ...string) *Node {
	t.Helper()
	store := apply.Store{Dir: t.TempDir()}
	if err := store.Init(); err != nil {
		t.Fatal(err)
	}
	m := haproxy.New(Binary(t), execPrefix, store.LiveDir(), store.RunDir())
	t.Cleanup(func() {
		if err := m.Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	port := FreePort(t)
	return &Node{
		Manager: m,
		Applier: &apply.Applier{Store: store, HAProxy: m},
		URL:     fmt.Sprintf("http://127.0.0.1:%d/", port),
		Port:    port,
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// HoldPort listens on a free port until the test ends and returns it, so
// that an HAProxy bind on it fails at runtime.
func HoldPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// Config renders a master-worker configuration, like the API's, that
// listens on 127.0.0.1 at each of ports and forwards to backend. It refuses
// to load without FULCRUM_RUN_DIR, proving the agent sets it.
func Config(backend string, ports ...int) string {
	return frontend(ports) + "    default_backend be\n\nbackend be\n    server s1 " + backend + "\n"
}

// IncludeConfig renders a configuration like Config whose frontend answers
// every request with the content of haproxy.d/<leaf>, read through
// FULCRUM_CONF_DIR, so the answer shows which file set HAProxy loaded.
func IncludeConfig(leaf string, ports ...int) string {
	return frontend(ports) + fmt.Sprintf(
		"    http-request return status 200 content-type text/plain file \"${FULCRUM_CONF_DIR}/haproxy.d/%s\"\n", leaf)
}

// frontend renders the global and defaults sections and the start of
// frontend "fe", bound to ports.
func frontend(ports []int) string {
	var b strings.Builder
	b.WriteString(`global
    master-worker
    stats socket "${FULCRUM_RUN_DIR}/haproxy.sock" mode 600 level admin expose-fd listeners
    server-state-file "${FULCRUM_RUN_DIR}/server-state"
.if !defined(FULCRUM_RUN_DIR)
    .alert "FULCRUM_RUN_DIR is not set"
.endif

defaults
    mode http
    load-server-state-from-file global
    timeout connect 2s
    timeout client 10s
    timeout server 10s

frontend fe
`)
	for _, p := range ports {
		fmt.Fprintf(&b, "    bind 127.0.0.1:%d\n", p)
	}
	return b.String()
}

// PoolServer is one server of Pool.
type PoolServer struct {
	// Name is the server name, Addr its host:port.
	Name, Addr string
	// Weight and Maint are its runtime settings.
	Weight int
	Maint  bool
	// Check has HAProxy check it (a TCP connect every CheckInterval, down
	// after one failure, up after two successes).
	Check bool
}

// CheckInterval is the interval of PoolServer's health check.
const CheckInterval = 100 * time.Millisecond

// Pool renders a bundle as the API's compiler would: a frontend on port
// balancing round-robin over servers in backend "pool-web", and
// haproxy.d/servers.json listing them, whose structure hash is the SHA-256
// of the configuration with every weight and admin state masked out.
func Pool(port int, servers ...PoolServer) map[string]string {
	type entry struct {
		Backend string `json:"backend"`
		Server  string `json:"server"`
		Weight  int    `json:"weight"`
		Admin   string `json:"admin"`
		Address string `json:"address"`
		Port    int    `json:"port"`
		Checked bool   `json:"checked"`
	}
	list := make([]entry, 0, len(servers))
	for _, s := range servers {
		admin := map[bool]string{false: "ready", true: "maint"}[s.Maint]
		host, port, err := net.SplitHostPort(s.Addr)
		if err != nil {
			panic(err)
		}
		portNum, err := strconv.Atoi(port)
		if err != nil {
			panic(err)
		}
		list = append(list, entry{
			Backend: "pool-web", Server: s.Name, Weight: s.Weight, Admin: admin, Address: host, Port: portNum, Checked: s.Check,
		})
	}
	sum := sha256.Sum256([]byte(poolConfig(port, servers, true)))
	js, err := json.Marshal(map[string]any{"structure": hex.EncodeToString(sum[:]), "servers": list})
	if err != nil {
		panic(err)
	}
	return map[string]string{"haproxy.cfg": poolConfig(port, servers, false), "haproxy.d/servers.json": string(js)}
}

// poolConfig renders Pool's haproxy.cfg, with the runtime settings replaced
// by placeholders when masked.
func poolConfig(port int, servers []PoolServer, masked bool) string {
	var b strings.Builder
	b.WriteString(frontend([]int{port}))
	b.WriteString("    default_backend pool-web\n\nbackend pool-web\n    balance roundrobin\n")
	for _, s := range servers {
		settings := fmt.Sprintf("weight %d", s.Weight)
		if s.Maint {
			settings += " disabled"
		}
		if masked {
			settings = "<settings>"
		}
		if s.Check {
			settings += fmt.Sprintf(" check inter %dms fall 1 rise 2", CheckInterval.Milliseconds())
		}
		fmt.Fprintf(&b, "    server %s %s %s\n", s.Name, s.Addr, settings)
	}
	return b.String()
}

// noKeepAlive makes every request open a new TCP connection, so that each
// one exercises the listener through reloads.
var noKeepAlive = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   5 * time.Second,
}

// Get fetches url on a new connection and returns the body.
func Get(url string) (string, error) {
	resp, err := noKeepAlive.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b), nil
}

// WaitFor polls url until it answers want, failing the test after timeout.
func WaitFor(t testing.TB, url, want string, timeout time.Duration) {
	t.Helper()
	var got string
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, err = Get(url); err == nil && got == want {
			return
		}
	}
	t.Fatalf("%s answered %q (err %v), want %q within %s", url, got, err, want, timeout)
}

// Traffic is a steady request load on one URL.
type Traffic struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	answers  map[string]int
	failures []string
}

// StartTraffic runs workers goroutines requesting url back to back, each
// request on a new connection, until Stop or until limit elapses.
func StartTraffic(url string, workers int, limit time.Duration) *Traffic {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	tr := &Traffic{cancel: cancel, answers: map[string]int{}}
	for range workers {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for ctx.Err() == nil {
				tr.record(Get(url))
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	return tr
}

func (tr *Traffic) record(body string, err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if err != nil {
		tr.failures = append(tr.failures, err.Error())
		return
	}
	tr.answers[body]++
}

// Stop ends the load and returns the count of each answer and the errors.
func (tr *Traffic) Stop() (answers map[string]int, failures []string) {
	tr.cancel()
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.answers, tr.failures
}
