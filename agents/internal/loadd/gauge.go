package loadd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"fulcrum/agents/internal/dllc"
)

// maxGaugeOutput bounds what a file or command may hand us.
const maxGaugeOutput = 4096

// FileSource reads a load from a file at every sample: a decimal number,
// 1.0 for a fully busy server.
type FileSource struct {
	Path string
}

// Kind returns "file".
func (s *FileSource) Kind() string { return "file" }

// Sample reads the file.
func (s *FileSource) Sample(_ context.Context, _ time.Time) (Sample, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return Sample{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGaugeOutput+1))
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", s.Path, err)
	}
	if len(b) > maxGaugeOutput {
		return Sample{}, fmt.Errorf("%s: longer than %d bytes", s.Path, maxGaugeOutput)
	}
	load, err := parseLoad(b)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", s.Path, err)
	}
	return gaugeSample(load), nil
}

// CommandSource runs a shell command at every sample and reads a load from
// its standard output, as FileSource reads a file.
type CommandSource struct {
	Command string
	// Timeout bounds each run; the command's whole process group is killed
	// when it expires.
	Timeout time.Duration
}

// Kind returns "command".
func (s *CommandSource) Kind() string { return "command" }

// Sample runs the command once.
func (s *CommandSource) Sample(ctx context.Context, _ time.Time) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", s.Command)
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, so that a timeout also ends what the shell
	// started (a pipeline, a sleep) and Wait is not held by their pipes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// The shell is gone but something it started still holds the
		// output: end it too, or every sample would leave one behind.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return Sample{}, fmt.Errorf("command timed out after %s", s.Timeout)
	case err != nil:
		return Sample{}, fmt.Errorf("command: %w%s", err, stderrSuffix(stderr.String()))
	case stdout.overflow:
		return Sample{}, fmt.Errorf("command: output longer than %d bytes", maxGaugeOutput)
	}
	load, err := parseLoad(stdout.Bytes())
	if err != nil {
		return Sample{}, fmt.Errorf("command output: %w", err)
	}
	return gaugeSample(load), nil
}

func stderrSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s
}

// limitedBuffer keeps the first maxGaugeOutput bytes written to it. (Not
// an embedded bytes.Buffer: io.Copy would use its ReadFrom, unlimited.)
type limitedBuffer struct {
	buf      bytes.Buffer
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := maxGaugeOutput - b.buf.Len(); n > room {
		b.overflow = true
		p = p[:max(room, 0)]
	}
	b.buf.Write(p)
	return n, nil
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }

// parseLoad reads a load written as a decimal number (surrounding white
// space allowed): finite and not negative. Loads above dllc.MaxLoad count
// as it.
func parseLoad(b []byte) (float64, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, errors.New("empty, want a load such as 0.75")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a load (a decimal number such as 0.75)", truncate(s, 40))
	}
	if v < 0 {
		return 0, fmt.Errorf("load %s is negative", s)
	}
	return min(v, dllc.MaxLoad/dllc.FullLoad), nil
}

// gaugeSample splits a load into busy (up to 1) and waiting (the rest).
func gaugeSample(load float64) Sample {
	busy := min(load, 1)
	return Sample{Busy: busy, BusyOf: 1, Waiting: load - busy, WaitingOf: 1}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
