package haproxy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/disktest"
)

func TestServerCommands(t *testing.T) {
	ready := bundle.Server{Backend: "pool-web", Server: "s1", Weight: 1, Admin: bundle.Ready}
	reweighted, maint, both := ready, ready, ready
	reweighted.Weight = 0
	maint.Admin = bundle.Maint
	both.Weight, both.Admin = 7, bundle.Maint
	tests := []struct {
		name   string
		change bundle.ServerChange
		want   []string
	}{
		{name: "weight", change: bundle.ServerChange{From: ready, To: reweighted}, want: []string{"set weight pool-web/s1 0"}},
		{name: "maint", change: bundle.ServerChange{From: ready, To: maint}, want: []string{"set server pool-web/s1 state maint"}},
		{name: "ready", change: bundle.ServerChange{From: maint, To: ready}, want: []string{"set server pool-web/s1 state ready"}},
		{
			name: "both", change: bundle.ServerChange{From: ready, To: both},
			want: []string{"set weight pool-web/s1 7", "set server pool-web/s1 state maint"},
		},
		{name: "nothing", change: bundle.ServerChange{From: ready, To: ready}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, serverCommands(tt.change)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteReplaceOnAFullDisk: a server state that does not fit leaves
// neither a partial file nor the previous reload's state behind, and is
// written whole once there is room.
func TestWriteReplaceOnAFullDisk(t *testing.T) {
	dir := disktest.Tmpfs(t, 1<<20)
	path := filepath.Join(dir, ServerStateFile)
	if err := writeReplace(path, []byte("1\n# the previous reload's\n")); err != nil {
		t.Fatal(err)
	}
	release := disktest.Fill(t, dir, 0)
	state := bytes.Repeat([]byte("1 pool-web 1 s1 127.0.0.1 2 0 1 1 30 15 3 4 6 0 0 0 - 80 -\n"), 200)
	if err := writeReplace(path, state); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writeReplace on a full disk = %v, want ENOSPC", err)
	}
	for _, name := range []string{ServerStateFile, ServerStateFile + ".tmp"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", name, err)
		}
	}
	release()
	if err := writeReplace(path, state); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, state) {
		t.Errorf("server-state = %d bytes (%v), want the %d written", len(got), err, len(state))
	}
}
