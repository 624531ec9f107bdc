package keepalived

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/process"
)

// binary returns the path of keepalived, or fails the test when it is
// missing: a skip would let CI pass without the real-daemon tests having
// run (make deps installs it).
func binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("keepalived")
	if err != nil {
		t.Fatalf("keepalived is not on PATH; install it (make deps) to run the real-daemon tests")
	}
	return path
}

// writeSet writes files as a set directory, as the agent's store does.
func writeSet(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for _, p := range bundle.Parts {
		if err := os.MkdirAll(filepath.Join(dir, p.Dir), bundle.DirMode); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), bundle.Mode(name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newManager returns a Manager for a fresh state directory, logging to a
// file, stopped at the end of the test.
func newManager(t testing.TB, execPrefix ...string) *Manager {
	t.Helper()
	dir := t.TempDir()
	m := New(binary(t), "nft", execPrefix, filepath.Join(dir, "live"), filepath.Join(dir, "run"))
	m.LogFile = filepath.Join(dir, "keepalived.log")
	t.Cleanup(func() {
		if err := m.Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if t.Failed() {
			log, _ := os.ReadFile(m.LogFile)
			t.Logf("keepalived log:\n%s", log)
		}
	})
	return m
}

const virtualServer = `virtual_server 10.0.0.10 80 {
    delay_loop 2
    lb_algo wlc
    lb_kind NAT
    protocol TCP
    real_server 10.0.1.2 80 {
        weight 1
        TCP_CHECK {
            connect_timeout 1
        }
    }
}
`

const ipvsJSON = `{"services": [{"key": "tcp 10.0.0.10:80", "protocol": "tcp", "address": "10.0.0.10", "port": 80,
	"fwmark": 0, "scheduler": "sed", "keepalived_scheduler": "wlc"}]}`

// TestCheck runs keepalived --config-test on good and bad sets; it needs no
// IPVS, so it runs on the development host too.
func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		nft     string
		wantErr string // "" for accepted
	}{
		{name: "virtual server", files: map[string]string{bundle.KeepalivedFile: virtualServer, bundle.IPVSFile: ipvsJSON}},
		{
			name:    "unknown keyword",
			files:   map[string]string{bundle.KeepalivedFile: strings.Replace(virtualServer, "delay_loop 2", "bogus_keyword 2", 1)},
			wantErr: "Unknown keyword 'bogus_keyword'",
		},
		{
			name:    "scheduler keepalived does not know",
			files:   map[string]string{bundle.KeepalivedFile: strings.Replace(virtualServer, "lb_algo wlc", "lb_algo dllc", 1)},
			wantErr: "Invalid lvs_scheduler 'dllc'",
		},
		{
			name:    "unbalanced braces",
			files:   map[string]string{bundle.KeepalivedFile: strings.TrimSuffix(virtualServer, "}\n")},
			wantErr: "missing '}'",
		},
		{
			name: "include relative to keepalived.conf reads the candidate's file",
			files: map[string]string{
				bundle.KeepalivedFile:             "include keepalived.d/vs.conf\n",
				bundle.KeepalivedDir + "/vs.conf": strings.Replace(virtualServer, "delay_loop 2", "bogus_in_include 2", 1),
			},
			wantErr: "Unknown keyword 'bogus_in_include'",
		},
		{
			name:    "bad ipvs.json",
			files:   map[string]string{bundle.KeepalivedFile: virtualServer, bundle.IPVSFile: `{"services": [{"key": ""}]}`},
			wantErr: "the agent rejected the configuration:\nkeepalived.d/ipvs.json",
		},
		{
			name:    "bad ha.json",
			files:   map[string]string{bundle.KeepalivedFile: virtualServer, bundle.HAFile: `{"node": "lb1", "run_dir": "relative"}`},
			wantErr: "the agent rejected the configuration:\nkeepalived.d/ha.json: run_dir",
		},
		{
			name:    "nft script without nft",
			files:   map[string]string{bundle.KeepalivedFile: virtualServer, bundle.NftFile: "table inet fulcrum\n"},
			nft:     "-",
			wantErr: "--nft is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(binary(t), "nft", nil, "", t.TempDir())
			if tt.nft == "-" {
				m.Nft = ""
			}
			err := m.Check(context.Background(), writeSet(t, t.TempDir(), tt.files))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var ce *CheckError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check error = %v, want a CheckError containing %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "keyword") && !strings.HasPrefix(err.Error(), "keepalived rejected the configuration:\n") {
				t.Errorf("Check error = %q, want it to say keepalived rejected it", err)
			}
		})
	}
}

// TestCheckMakesTheCandidatesTrackFiles: a node's first HA revision names
// track files that do not exist yet, and keepalived 2.3's --config-test
// refuses a vrrp_track_file without its file. Check makes the missing ones
// "0" (in service) and leaves the ones the live set follows as they are.
func TestCheckMakesTheCandidatesTrackFiles(t *testing.T) {
	run := filepath.Join(t.TempDir(), "lb1")
	standby, haproxy := filepath.Join(run, "fulcrum_standby"), filepath.Join(run, "fulcrum_haproxy")
	ha := fmt.Sprintf(`{"node": "lb1", "run_dir": %q, "fifo": %q, "standby": false,
		"track_files": {"standby": %q, "haproxy": %q}, "groups": []}`, run, filepath.Join(run, "notify.fifo"), standby, haproxy)
	files := map[string]string{bundle.KeepalivedFile: virtualServer, bundle.HAFile: ha}
	m := New(binary(t), "nft", nil, "", t.TempDir())
	if err := m.Check(context.Background(), writeSet(t, t.TempDir(), files)); err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, path := range []string{standby, haproxy} {
		if got, err := os.ReadFile(path); err != nil || string(got) != "0\n" {
			t.Fatalf("%s = %q, %v; want \"0\\n\"", path, got, err)
		}
	}
	if info, err := os.Stat(run); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("run dir %s: %v %v, want mode 0700", run, info, err)
	}
	// A file the live configuration follows keeps its value (here: in standby).
	if err := os.WriteFile(standby, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background(), writeSet(t, t.TempDir(), files)); err != nil {
		t.Fatalf("Check again: %v", err)
	}
	if got, _ := os.ReadFile(standby); string(got) != "1\n" {
		t.Fatalf("the live standby track file became %q", got)
	}
}

// TestLifecycle starts, reloads and stops the real keepalived with a
// configuration without virtual servers, which needs no IPVS.
func TestLifecycle(t *testing.T) {
	m := newManager(t)
	m.Settle = 300 * time.Millisecond
	loads, prepared := 0, 0
	m.AfterLoad = func(context.Context) { loads++ }
	m.BeforeLoad = func(context.Context) error {
		if m.Running(context.Background()) != (prepared > 0) {
			t.Errorf("BeforeLoad %d ran with keepalived running: %v", prepared+1, m.Running(context.Background()))
		}
		prepared++
		return nil
	}
	writeSet(t, m.ConfDir, map[string]string{bundle.KeepalivedFile: "global_defs {\n    router_id fulcrum-a\n}\n"})
	ctx := context.Background()
	if m.Running(ctx) {
		t.Fatal("running before Start")
	}
	if err := m.Reload(ctx); err == nil {
		t.Fatal("Reload without a running keepalived succeeded")
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := m.ours(m.PIDFile())
	if pid == 0 || !m.Running(ctx) || m.PID() != pid {
		t.Fatal("not running after Start")
	}
	if vrrp := m.VRRPPID(); vrrp != 0 {
		t.Errorf("VRRP child %d without VRRP instances", vrrp)
	}
	if err := m.Start(ctx); err == nil {
		t.Error("a second Start succeeded")
	}
	if err := os.WriteFile(filepath.Join(m.ConfDir, bundle.KeepalivedFile), []byte("global_defs {\n    router_id fulcrum-b\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if got := m.ours(m.PIDFile()); got != pid {
		t.Errorf("pid %d after reload, want %d (a reload, not a restart)", got, pid)
	}
	waitForLog(t, m, "Reloading")
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Running(ctx) || process.Alive(pid) {
		t.Errorf("keepalived (pid %d) still running after Stop", pid)
	}
	if loads != 2 || prepared != 2 {
		t.Errorf("AfterLoad ran %d times, BeforeLoad %d; want 2 each (start, reload)", loads, prepared)
	}
	if err := m.Stop(ctx); err != nil {
		t.Errorf("Stop with nothing running: %v", err)
	}
}

// TestStartFailure: keepalived refusing its options exits at once; Start
// reports it with the log.
func TestStartFailure(t *testing.T) {
	m := newManager(t)
	m.Binary = filepath.Join(t.TempDir(), "keepalived")
	if err := os.WriteFile(m.Binary, []byte("#!/bin/sh\necho 'keepalived: simulated failure' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSet(t, m.ConfDir, map[string]string{bundle.KeepalivedFile: "global_defs {\n}\n"})
	err := m.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited during start") || !strings.Contains(err.Error(), "simulated failure") {
		t.Fatalf("Start error = %v, want an early exit with the log", err)
	}
}

// TestBeforeLoadFailure: a BeforeLoad error fails the start before
// keepalived runs, and the reload before the SIGHUP.
func TestBeforeLoadFailure(t *testing.T) {
	m := newManager(t)
	m.Settle = 300 * time.Millisecond
	writeSet(t, m.ConfDir, map[string]string{bundle.KeepalivedFile: "global_defs {\n    router_id fulcrum-a\n}\n"})
	ctx := context.Background()
	m.BeforeLoad = func(context.Context) error { return errors.New("no run dir") }
	if err := m.Start(ctx); err == nil || !strings.Contains(err.Error(), "no run dir") {
		t.Fatalf("Start error = %v, want BeforeLoad's", err)
	}
	if m.Running(ctx) {
		t.Fatal("keepalived started although BeforeLoad failed")
	}
	m.BeforeLoad = nil
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	m.BeforeLoad = func(context.Context) error { return errors.New("no run dir") }
	if err := m.Reload(ctx); err == nil || !strings.Contains(err.Error(), "no run dir") {
		t.Fatalf("Reload error = %v, want BeforeLoad's", err)
	}
	time.Sleep(300 * time.Millisecond)
	if b, _ := os.ReadFile(m.LogFile); strings.Contains(string(b), "Reloading") {
		t.Error("keepalived reloaded although BeforeLoad failed")
	}
}

func waitForLog(t *testing.T, m *Manager, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(m.LogFile); strings.Contains(string(b), text) {
			return
		}
	}
	b, _ := os.ReadFile(m.LogFile)
	t.Fatalf("%q never appeared in keepalived's log:\n%s", text, b)
}

func TestNoSuchTable(t *testing.T) {
	for out, want := range map[string]bool{
		"Error: Could not process rule: No such file or directory\ndelete table inet fulcrum\n": true,
		"Error: Could not process rule: Operation not permitted":                                false,
	} {
		if got := noSuchTable(out); got != want {
			t.Errorf("noSuchTable(%q) = %v, want %v", out, got, want)
		}
	}
}
