package process

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestAliveAndPIDFile(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	path := filepath.Join(t.TempDir(), "x.pid")
	if got := ReadPIDFile(path); got != 0 {
		t.Fatalf("missing pid file: %d, want 0", got)
	}
	for text, want := range map[string]int{"123\n": 123, "junk": 0, "-5": 0} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ReadPIDFile(path); got != want {
			t.Errorf("pid file %q: %d, want %d", text, got, want)
		}
	}
}

// A process that ignores SIGTERM is SIGKILLed after the timeout; a reaped
// one is gone, and CommandLineHas tells it by its arguments.
func TestTerminateEndsInSIGKILL(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; while :; do sleep 0.05; done`, "fulcrum-process-test")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pid := cmd.Process.Pid
	time.Sleep(100 * time.Millisecond) // let the trap be set
	if !CommandLineHas(pid, "fulcrum-process-test") || CommandLineHas(pid, "not-"+strconv.Itoa(pid)+"-there") {
		t.Fatal("CommandLineHas does not read the command line")
	}
	start := time.Now()
	if err := Terminate([]int{pid}, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	<-done
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("gone after %v: SIGTERM should have been ignored until the timeout", took)
	}
	if Alive(pid) || AnyAlive([]int{pid}) {
		t.Error("still alive after Terminate")
	}
	if err := Terminate(nil, time.Second); err != nil {
		t.Errorf("nothing to stop: %v", err)
	}
}
