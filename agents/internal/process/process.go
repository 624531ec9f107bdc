// Package process holds the few process helpers the daemon managers share:
// liveness from /proc, pid files, and a graceful stop that ends in SIGKILL.
package process

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// PollInterval is how often Terminate checks whether processes are gone.
const PollInterval = 50 * time.Millisecond

// Alive reports whether pid exists and is not a zombie; a daemon's master
// is reparented when its launcher exits, and a zombie is as good as gone.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// AnyAlive reports whether any of pids is Alive.
func AnyAlive(pids []int) bool {
	for _, pid := range pids {
		if Alive(pid) {
			return true
		}
	}
	return false
}

// ReadPIDFile returns the pid written in path, 0 if absent or unreadable.
func ReadPIDFile(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid < 0 {
		return 0
	}
	return pid
}

// CommandLineHas reports whether pid's command line contains marker (for
// example its own pid file or socket), which tells our daemon apart from
// an unrelated process that reused the pid.
func CommandLineHas(pid int, marker string) bool {
	return bytes.Contains(CommandLine(pid), []byte(marker))
}

// CommandLine returns pid's command line, NUL-separated; empty when the
// process is gone, or while it executes a new program.
func CommandLine(pid int) []byte {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return cmdline
}

// Terminate sends SIGTERM to pids[0] (the master, which ends the others),
// waits up to timeout for all of pids to go, then SIGKILLs the survivors.
// It fails only when a process outlives SIGKILL.
func Terminate(pids []int, timeout time.Duration) error {
	if len(pids) == 0 {
		return nil
	}
	_ = syscall.Kill(pids[0], syscall.SIGTERM)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && AnyAlive(pids) {
		time.Sleep(PollInterval)
	}
	for _, pid := range pids {
		if Alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for i := 0; i < 20 && AnyAlive(pids); i++ { // SIGKILL is not instant either
		time.Sleep(PollInterval)
	}
	if AnyAlive(pids) {
		return fmt.Errorf("processes %v survived SIGKILL", pids)
	}
	return nil
}
