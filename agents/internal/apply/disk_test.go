package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/disktest"
)

// TestApplyOnAFullDisk applies a revision with the state directory's file
// system a few pages short, one more page each time, both through a reload
// and at runtime. Each apply either succeeds whole, or changes nothing the
// daemons run (no reload, no runtime change, the live set and its record as
// they were) and names the cause; with the space back, the same revision
// applies.
func TestApplyOnAFullDisk(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct{ live, next map[string]string }{
		"reload": {
			live: cfgOnly(readTestdata(t, "a.cfg")),
			next: with(cfgOnly(readTestdata(t, "b.cfg")), "haproxy.d/hosts.map", "example.org pool-web\n"),
		},
		"runtime": {live: pool(t, "h1", 1, 1, bundle.Ready), next: pool(t, "h1", 0, 1, bundle.Ready)},
	}
	for name, c := range cases {
		for free := 0; free <= 5; free++ {
			t.Run(fmt.Sprintf("%s/%d pages free", name, free), func(t *testing.T) {
				s := Store{Dir: filepath.Join(disktest.Tmpfs(t, 1<<20), "state")}
				if err := s.Init(); err != nil {
					t.Fatal(err)
				}
				makeLive(t, s, 1, c.live)
				if err := s.SetState(State{Revision: 1, Files: Digests(c.live)}); err != nil {
					t.Fatal(err)
				}
				d := &fakeDaemon{running: true}
				a := &Applier{Store: s, HAProxy: d}
				release := disktest.Fill(t, s.Dir, free)
				r := a.Apply(ctx, newBundle(2, c.next))
				got := observe(t, s, d, r)
				if r.State == client.StateApplied {
					if got.Revision != 2 || !cmp.Equal(got.Live, c.next) {
						t.Errorf("applied, but the store says revision %d, live %v", got.Revision, got.Live)
					}
					return
				}
				t.Logf("refused: %s", r.Message)
				want := outcome{State: client.StateFailed, Revision: 1, Live: c.live, LastGood: got.LastGood, Sets: got.Sets}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("a refused apply touched the daemons or the store (-want +got):\n%s", diff)
				}
				if !r.Retry || !strings.HasPrefix(r.Message, "no space left on device writing "+s.Dir+"/") {
					t.Errorf("retry %t, message %q; want a retry and the cause, in the state directory", r.Retry, r.Message)
				}
				release()
				d.calls = nil
				if r := a.Apply(ctx, newBundle(2, c.next)); r.State != client.StateApplied {
					t.Errorf("with the space back: %s %s", r.State, r.Message)
				}
			})
		}
	}
}

// TestApplyOnAReadOnlyDisk: with the state directory's file system
// read-only, an apply touches nothing, says why and is marked for retry;
// read-write again, the same revision applies.
func TestApplyOnAReadOnlyDisk(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	mount := disktest.Tmpfs(t, 1<<20)
	s := Store{Dir: filepath.Join(mount, "state")}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	makeLive(t, s, 1, cfgA)
	if err := s.SetState(State{Revision: 1, Files: Digests(cfgA)}); err != nil {
		t.Fatal(err)
	}
	disktest.ReadOnly(t, mount, true)
	d := &fakeDaemon{running: true}
	a := &Applier{Store: s, HAProxy: d}
	r := a.Apply(context.Background(), newBundle(2, cfgB))
	want := outcome{State: client.StateFailed, Revision: 1, Live: cfgA, Sets: 1}
	if diff := cmp.Diff(want, observe(t, s, d, r)); diff != "" {
		t.Errorf("outcome mismatch (-want +got):\n%s", diff)
	}
	if wantMsg := "read-only file system creating " + s.Dir + "/bundles/r2-"; !r.Retry || !strings.HasPrefix(r.Message, wantMsg) {
		t.Errorf("retry %t, message %q; want a retry and a message starting %q", r.Retry, r.Message, wantMsg)
	}
	disktest.ReadOnly(t, mount, false)
	if r := a.Apply(context.Background(), newBundle(2, cfgB)); r.State != client.StateApplied {
		t.Errorf("read-write again: %s %s", r.State, r.Message)
	}
}

// TestApplyRecordFailingAfterReload: when the record prepared before the
// swap cannot be made current after the reload (the disk went read-only
// in between; here it is simply gone), the apply goes back to the last
// good set and reloads it rather than leave the daemons running a
// revision the node does not record.
func TestApplyRecordFailingAfterReload(t *testing.T) {
	cfgA, cfgB := cfgOnly(readTestdata(t, "a.cfg")), cfgOnly(readTestdata(t, "b.cfg"))
	s := newStore(t, cfgA, 1)
	d := &fakeDaemon{running: true}
	d.onReload = func() {
		d.onReload = nil
		if err := os.Remove(filepath.Join(s.Dir, nextState)); err != nil {
			t.Fatal(err)
		}
	}
	a := &Applier{Store: s, HAProxy: d}
	r := a.Apply(context.Background(), newBundle(2, cfgB))
	want := outcome{Calls: []string{"check", "reload", "reload"}, State: client.StateFailed, Revision: 1, Live: cfgA, LastGood: cfgA, Sets: 1}
	if diff := cmp.Diff(want, observe(t, s, d, r)); diff != "" {
		t.Errorf("outcome mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(r.Message, "recording the revision failed, restored last-good configuration: rename ") {
		t.Errorf("message = %q", r.Message)
	}
}

func TestDiskFault(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string // "" for no disk fault
	}{
		{
			err:  &fs.PathError{Op: "write", Path: "/s/bundles/r2-1/haproxy.cfg", Err: syscall.ENOSPC},
			want: "no space left on device writing /s/bundles/r2-1/haproxy.cfg (the node's disk is full)",
		},
		{
			err:  fmt.Errorf("stage: %w", &fs.PathError{Op: "mkdirtemp", Path: "/s/bundles/r2-*", Err: syscall.EROFS}),
			want: "read-only file system creating /s/bundles/r2-* (the node's file system is read-only)",
		},
		{
			err:  &os.LinkError{Op: "rename", Old: "/s/live.tmp", New: "/s/live", Err: syscall.EROFS},
			want: "read-only file system renaming to /s/live (the node's file system is read-only)",
		},
		{
			err:  fmt.Errorf("track file /run/x: %w", &fs.PathError{Op: "open", Path: "/run/x", Err: syscall.EDQUOT}),
			want: "disk quota exceeded writing /run/x (the node's disk quota is used up)",
		},
		{err: syscall.ENOSPC, want: "no space left on device (the node's disk is full)"},
		{err: &fs.PathError{Op: "open", Path: "/s/state.json", Err: syscall.EACCES}},
		{err: errors.New("haproxy rejected the configuration")},
	} {
		got, ok := diskFault(tt.err)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("diskFault(%v) = %q, %t; want %q", tt.err, got, ok, tt.want)
		}
	}
}
