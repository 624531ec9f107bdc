package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fulcrum/agents/internal/testlog"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStderr string
		wantStdout string
	}{
		{args: []string{"--version"}, wantCode: 0, wantStdout: "fulcrum-loadd dev\n"},
		{args: []string{"-h"}, wantCode: 0, wantStderr: "Usage: fulcrum-loadd [flags]"},
		{args: []string{"--bogus"}, wantCode: 2, wantStderr: "flag provided but not defined: -bogus"},
		{args: []string{"extra"}, wantCode: 2, wantStderr: "unexpected arguments: [extra]"},
		{args: []string{"--source", "sytem"}, wantCode: 2, wantStderr: "want system, cgroup:PATH, file:PATH or command:CMD"},
		{args: []string{"--source", "file:load"}, wantCode: 2, wantStderr: "want file:/absolute/path"},
		{args: []string{"--allow", "10.0.0.0/33"}, wantCode: 2, wantStderr: `--allow "10.0.0.0/33": not a CIDR`},
		{args: []string{"--window", "400ms"}, wantCode: 2, wantStderr: "--window 400ms: at least twice --sample (250ms)"},
		{args: []string{"--sample", "1ms"}, wantCode: 2, wantStderr: "--sample 1ms: at least 10ms"},
		{args: []string{"--agent-listen", "", "--http-listen", ""}, wantCode: 2, wantStderr: "nothing to serve"},
		{args: []string{"--command-timeout", "0s"}, wantCode: 2, wantStderr: "--command-timeout 0s: must be positive"},
		{args: []string{"--log-level", "loud"}, wantCode: 2, wantStderr: "--log-level"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tt.wantStdout)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no such cgroup", []string{"--source", "cgroup:/nonexistent/group"}, "cannot open the load source"},
		{"port taken", []string{"--agent-listen", busy.Addr().String(), "--http-listen", "127.0.0.1:0"}, "cannot listen"},
		{"http port taken", []string{"--agent-listen", "127.0.0.1:0", "--http-listen", busy.Addr().String()}, "cannot listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// The whole command with a file source: agent-check and HTTP on the
// addresses it logs, the load following the file, nothing answered once the
// file is garbage for longer than the window, exit 0 when stopped.
func TestServesUntilStopped(t *testing.T) {
	loadFile := filepath.Join(t.TempDir(), "load")
	writeLoad(t, loadFile, "0.5\n")
	var stderr testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--source", "file:" + loadFile, "--agent-listen", "127.0.0.1:0",
			"--http-listen", "127.0.0.1:0", "--sample", "50ms", "--window", "300ms"}, io.Discard, &stderr)
	}()
	agentAddr := waitForLog(t, &stderr, `agent_listen=(\S+)`)
	httpAddr := waitForLog(t, &stderr, `http_listen=(\S+)`)

	waitFor(t, "the agent-check to answer 20%", func() bool { return agentReply(t, agentAddr) == "20%\n" })
	var report struct {
		LoadMilli  int64  `json:"load_milli"`
		MeasuredAt string `json:"measured_at"`
	}
	if status := getJSON(t, "http://"+httpAddr+"/v1/load", &report); status != 200 || report.LoadMilli != 500 {
		t.Errorf("GET /v1/load: %d %+v", status, report)
	}

	writeLoad(t, loadFile, "0.9\n")
	waitFor(t, "the agent-check to answer 11%", func() bool { return agentReply(t, agentAddr) == "11%\n" })

	writeLoad(t, loadFile, "garbage\n")
	waitFor(t, "the agent-check to answer nothing", func() bool { return agentReply(t, agentAddr) == "" })
	var failure struct{ Error string }
	if status := getJSON(t, "http://"+httpAddr+"/v1/load", &failure); status != 503 ||
		!strings.Contains(failure.Error, `file source failing for`) || !strings.Contains(failure.Error, `"garbage" is not a load`) {
		t.Errorf("GET /v1/load while failing: %d %+v", status, failure)
	}
	waitForLog(t, &stderr, `(load unknown)`) // logged at the first failed sample past the window

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the context ended")
	}
	for _, want := range []string{"first load measured", "load source failing", "fulcrum-loadd stopping"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func writeLoad(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func agentReply(t *testing.T, addr string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForLog waits for a log line matching pattern and returns its group.
func waitForLog(t *testing.T, log *testlog.Buffer, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var m []string
	waitFor(t, "a log line matching "+pattern, func() bool {
		m = re.FindStringSubmatch(log.String())
		return m != nil
	})
	return m[1]
}
