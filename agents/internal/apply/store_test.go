package apply

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
)

func TestStageModes(t *testing.T) {
	s := newStore(t, nil, 0)
	files := map[string]string{
		bundle.MainFile:          "cfg",
		bundle.ServersFile:       "{}",
		"haproxy.d/web.pem":      "key",
		"haproxy.d/ping-host.sh": "#!/bin/sh\n",
	}
	dir, err := s.Stage(1, files)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{
		".": 0o700, bundle.IncludeDir: 0o700,
		bundle.MainFile: 0o600, bundle.ServersFile: 0o600, "haproxy.d/web.pem": 0o600, "haproxy.d/ping-host.sh": 0o700,
	}
	got := map[string]os.FileMode{}
	for name := range want {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fi.Mode().Perm()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes mismatch (-want +got):\n%s", diff)
	}
	if read, err := ReadFiles(dir); err != nil || !cmp.Equal(read, files) {
		t.Errorf("ReadFiles = %v, %v; want what was staged", read, err)
	}
}

// TestLiveDirIsStable: the path HAProxy is given never changes; what it
// points at does, in one rename.
func TestLiveDirIsStable(t *testing.T) {
	s := newStore(t, cfgOnly("a"), 1)
	first, err := os.ReadFile(filepath.Join(s.LiveDir(), bundle.MainFile))
	if err != nil {
		t.Fatal(err)
	}
	makeLive(t, s, 2, with(cfgOnly("b"), "haproxy.d/x.map", "x"))
	second, err := os.ReadFile(filepath.Join(s.LiveDir(), bundle.MainFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != "a" || string(second) != "b" {
		t.Errorf("LiveDir served %q then %q, want a then b", first, second)
	}
	if target, err := os.Readlink(s.LiveDir()); err != nil || filepath.IsAbs(target) {
		t.Errorf("live link = %q (%v), want a relative link", target, err)
	}
}

// TestMigrateSingleFile: a state directory of the agent that managed only
// DIR/haproxy.cfg keeps its revision, and its old state.json loads.
func TestMigrateSingleFile(t *testing.T) {
	tests := []struct {
		name      string
		live      string
		lastGood  string
		loaded    string
		wantLive  string
		wantState State
	}{
		{name: "applied", live: "cfg A", loaded: "cfg A", wantLive: "cfg A"},
		{name: "interrupted after the swap", live: "cfg B", lastGood: "cfg A", loaded: "cfg A", wantLive: "cfg A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			writeLegacy(t, s.Dir, bundle.MainFile, tt.live)
			writeLegacy(t, s.Dir, "state.json", `{"revision":4,"files":{"haproxy.cfg":"`+Digest(tt.loaded)+`"}}`)
			if tt.lastGood != "" {
				writeLegacy(t, s.Dir, "last-good/haproxy.cfg", tt.lastGood)
			}
			if err := s.Init(); err != nil {
				t.Fatal(err)
			}
			st, err := s.State()
			if err != nil || st.Revision != 4 {
				t.Fatalf("State = %+v, %v; want revision 4", st, err)
			}
			live, err := s.Live()
			if err != nil || !cmp.Equal(live, cfgOnly(tt.wantLive)) {
				t.Errorf("Live = %v, %v; want %q", live, err, tt.wantLive)
			}
			// A master started by the older agent rereads DIR/haproxy.cfg.
			if b, err := os.ReadFile(filepath.Join(s.Dir, bundle.MainFile)); err != nil || string(b) != tt.wantLive {
				t.Errorf("DIR/haproxy.cfg = %q, %v; want it to follow the live set", b, err)
			}
			if err := s.Init(); err != nil { // idempotent
				t.Fatal(err)
			}
			makeLive(t, s, 5, cfgOnly("cfg C"))
			if lg, err := s.LastGood(); err != nil || !cmp.Equal(lg, cfgOnly(tt.wantLive)) {
				t.Errorf("LastGood after the next swap = %v, %v; want %q", lg, err, tt.wantLive)
			}
		})
	}
}

func writeLegacy(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPrepareState: a prepared state is not the recorded one until it is
// committed, and a discarded one never is.
func TestPrepareState(t *testing.T) {
	s := newStore(t, cfgOnly("a"), 1)
	revision := func() int64 {
		t.Helper()
		rev, err := s.Revision()
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	if err := s.PrepareState(State{Revision: 2}); err != nil {
		t.Fatal(err)
	}
	s.DiscardState()
	if err := s.CommitState(); err == nil || revision() != 1 {
		t.Errorf("committing a discarded state: %v, revision %d; want an error, revision 1", err, revision())
	}
	if err := s.PrepareState(State{Revision: 3}); err != nil {
		t.Fatal(err)
	}
	if revision() != 1 {
		t.Errorf("prepared: revision %d, want 1 until committed", revision())
	}
	if err := s.CommitState(); err != nil || revision() != 3 {
		t.Errorf("committed: %v, revision %d; want revision 3", err, revision())
	}
	s.DiscardState() // nothing left to discard
	if revision() != 3 {
		t.Errorf("discarding after the commit: revision %d, want 3", revision())
	}
}
