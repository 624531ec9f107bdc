package loadd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		file    string
		want    procStat
		wantErr string
	}{
		// Captured on the development host (the intr line shortened).
		{file: "proc-stat-2cpu", want: procStat{busy: 2896272, total: 5021349, cores: 2, running: 8}},
		{file: "proc-stat-4cpu-a", want: procStat{busy: 1500, total: 10000, cores: 4, running: 3}},
		// guest and guest_nice (50 and 10) are already in user and nice: not added again.
		{file: "proc-stat-4cpu-b", want: procStat{busy: 2400, total: 11400, cores: 4, running: 7}},
		{file: "proc-stat-short", wantErr: "cpu line has 4 numbers, want at least 8"},
		{file: "proc-stat-no-cores", wantErr: "no cpuN lines"},
		{file: "proc-stat-no-running", wantErr: "no procs_running line"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := parseProcStat(readTestdata(t, tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(procStat{})); diff != "" {
				t.Errorf("parseProcStat (-want +got):\n%s", diff)
			}
		})
	}
}

// The system source over a sequence of /proc/stat readings: a baseline,
// then busy from the difference and waiting from the run queue; a failure
// or counters going backwards start a new baseline.
func TestSystemSourceSequence(t *testing.T) {
	stat := filepath.Join(t.TempDir(), "stat")
	src := &SystemSource{StatPath: stat}
	steps := []struct {
		file    string // testdata file to read, "" for a missing file
		want    Sample
		wantErr bool
	}{
		{file: "proc-stat-4cpu-a"}, // baseline
		// Δbusy 900 of Δtotal 1400; procs_running 7 − 1 (loadd) − 4 cores = 2 waiting, over 4 cores.
		{file: "proc-stat-4cpu-b", want: Sample{Busy: 900, BusyOf: 1400, Waiting: 0.5, WaitingOf: 1}},
		{file: "proc-stat-4cpu-a"}, // counters went back: a new baseline
		{file: "", wantErr: true},
		{file: "proc-stat-4cpu-b"}, // after a failure: a new baseline
		{file: "proc-stat-4cpu-b", want: Sample{Busy: 0, BusyOf: 0, Waiting: 0.5, WaitingOf: 1}},
	}
	for i, step := range steps {
		os.Remove(stat)
		if step.file != "" {
			writeFile(t, stat, string(readTestdata(t, step.file)))
		}
		got, err := src.Sample(context.Background(), time.Time{})
		if (err != nil) != step.wantErr {
			t.Fatalf("step %d: err = %v, want error %v", i, err, step.wantErr)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("step %d (%s): sample (-want +got):\n%s", i, step.file, diff)
		}
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
