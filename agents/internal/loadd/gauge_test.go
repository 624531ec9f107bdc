package loadd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseLoad(t *testing.T) {
	good := map[string]float64{
		"0.5\n": 0.5, " 1.25 ": 1.25, "0": 0, "3": 3, "1e-1": 0.1, "2000": 1000, // 1000 loads: dllc.MaxLoad
	}
	for in, want := range good {
		if got, err := parseLoad([]byte(in)); err != nil || got != want {
			t.Errorf("parseLoad(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":          "empty",
		"\n":        "empty",
		"busy":      "not a load",
		"50%":       "not a load",
		"0.5\n0.7":  "not a load",
		"NaN":       "not a load",
		"+Inf":      "not a load",
		"-0.1":      "negative",
		"0.5 0.7\n": "not a load",
	}
	for in, want := range bad {
		if _, err := parseLoad([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseLoad(%q): err = %v, want %q", in, err, want)
		}
	}
}

func TestGaugeSample(t *testing.T) {
	tests := map[float64]Sample{
		0:   {Busy: 0, BusyOf: 1, Waiting: 0, WaitingOf: 1},
		0.5: {Busy: 0.5, BusyOf: 1, Waiting: 0, WaitingOf: 1},
		1:   {Busy: 1, BusyOf: 1, Waiting: 0, WaitingOf: 1},
		2.5: {Busy: 1, BusyOf: 1, Waiting: 1.5, WaitingOf: 1},
	}
	for load, want := range tests {
		if diff := cmp.Diff(want, gaugeSample(load)); diff != "" {
			t.Errorf("gaugeSample(%v) (-want +got):\n%s", load, diff)
		}
	}
}

func TestFileSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "load")
	src := &FileSource{Path: path}
	ctx := context.Background()
	if _, err := src.Sample(ctx, time.Time{}); err == nil {
		t.Error("a missing file gave a sample")
	}
	writeFile(t, path, "0.75\n")
	if got, err := src.Sample(ctx, time.Time{}); err != nil || got != gaugeSample(0.75) {
		t.Errorf("sample = %+v, %v; want %+v", got, err, gaugeSample(0.75))
	}
	writeFile(t, path, "1.5") // re-read at every sample
	if got, err := src.Sample(ctx, time.Time{}); err != nil || got != gaugeSample(1.5) {
		t.Errorf("sample = %+v, %v; want %+v", got, err, gaugeSample(1.5))
	}
	writeFile(t, path, "garbage\n")
	if _, err := src.Sample(ctx, time.Time{}); err == nil || !strings.Contains(err.Error(), `"garbage" is not a load`) {
		t.Errorf("err = %v", err)
	}
	writeFile(t, path, strings.Repeat("0", maxGaugeOutput+1))
	if _, err := src.Sample(ctx, time.Time{}); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("err = %v", err)
	}
}

func TestCommandSource(t *testing.T) {
	tests := []struct {
		command string
		want    float64
		wantErr string
		timeout time.Duration // 300ms if zero
	}{
		{command: "echo 0.42", want: 0.42},
		{command: "printf '%s\\n' 1.7", want: 1.7},
		{command: "echo 'no such metric' >&2; exit 3", wantErr: "exit status 3: no such metric"},
		{command: "echo busy", wantErr: `command output: "busy" is not a load`},
		{command: "true", wantErr: "empty"},
		{command: "head -c 5000 /dev/zero | tr '\\0' 0", wantErr: "output longer than 4096 bytes"},
		// A background process still holding the output: an error, not a hang.
		{command: "sleep 30 & echo 0.5", wantErr: "command: exec: WaitDelay expired", timeout: 3 * time.Second},
		// A pipeline that outlives the timeout is killed as a whole, and soon.
		{command: "sleep 30 | cat; echo 1", wantErr: "command timed out after 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			if tt.timeout == 0 {
				tt.timeout = 300 * time.Millisecond
			}
			src := &CommandSource{Command: tt.command, Timeout: tt.timeout}
			start := time.Now()
			got, err := src.Sample(context.Background(), start)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %s", elapsed)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != gaugeSample(tt.want) {
				t.Errorf("sample = %+v, %v; want %+v", got, err, gaugeSample(tt.want))
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	good := map[string]Spec{
		"system":                    {Kind: "system"},
		"cgroup:/sys/fs/cgroup/web": {Kind: "cgroup", Arg: "/sys/fs/cgroup/web"},
		"file:/run/load/":           {Kind: "file", Arg: "/run/load"},
		"command:echo 0.5":          {Kind: "command", Arg: "echo 0.5"},
		"command:a:b":               {Kind: "command", Arg: "a:b"},
	}
	for in, want := range good {
		if got, err := ParseSpec(in); err != nil || got != want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "sytem", "system:x", "cgroup:", "cgroup:relative/dir", "file:", "command:", "command:  "} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) succeeded", bad)
		}
	}
}
