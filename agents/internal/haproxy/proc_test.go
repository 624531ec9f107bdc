package haproxy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseShowProc(t *testing.T) {
	tests := []struct {
		file string
		want ProcTable
	}{
		{
			file: "show-proc-2.6.txt",
			want: ProcTable{MasterPID: 8195, Reloads: 1, Workers: []int{8224}, OldWorkers: []int{8196}},
		},
		{
			file: "show-proc-2.6-failed.txt",
			want: ProcTable{MasterPID: 8195, Reloads: 2, Failed: 1, Workers: []int{8224}},
		},
		{
			file: "show-proc-3.0.txt",
			want: ProcTable{MasterPID: 1162, Reloads: 5, Workers: []int{1271}, OldWorkers: []int{1233}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseShowProc(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseShowProcRejectsGarbage(t *testing.T) {
	if _, err := ParseShowProc("Unknown command.\n"); err == nil {
		t.Error("want an error without a master line")
	}
}

func TestNewWorkers(t *testing.T) {
	before := ProcTable{Workers: []int{10}}
	tests := []struct {
		name  string
		after ProcTable
		want  []int
	}{
		{name: "reload forked a worker", after: ProcTable{Workers: []int{11}, OldWorkers: []int{10}}, want: []int{11}},
		{name: "failed reload kept the old one", after: ProcTable{Workers: []int{10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.after.NewWorkers(before)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
