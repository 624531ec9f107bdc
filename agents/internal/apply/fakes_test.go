package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fulcrum/agents/internal/client"
)

// fakeDaemon records calls and fails them on demand.
type fakeDaemon struct {
	running    bool
	checkErr   error
	startErr   error
	reloadErrs []error // consumed one per Reload call
	calls      []string
}

func (d *fakeDaemon) Check(_ context.Context, path string) error {
	d.calls = append(d.calls, "check "+filepath.Base(path))
	return d.checkErr
}

func (d *fakeDaemon) Running(context.Context) bool { return d.running }

func (d *fakeDaemon) Start(context.Context) error {
	d.calls = append(d.calls, "start")
	if d.startErr == nil {
		d.running = true
	}
	return d.startErr
}

func (d *fakeDaemon) Reload(context.Context) error {
	d.calls = append(d.calls, "reload")
	if len(d.reloadErrs) == 0 {
		return nil
	}
	err := d.reloadErrs[0]
	d.reloadErrs = d.reloadErrs[1:]
	return err
}

// fakeSource answers polls from a script; once exhausted it cancels the run.
type fakeSource struct {
	answers []sourceAnswer
	known   []int64
	cancel  context.CancelFunc
}

type sourceAnswer struct {
	bundle *client.Bundle
	err    error
}

func (s *fakeSource) Desired(ctx context.Context, known int64, _ time.Duration) (*client.Bundle, error) {
	s.known = append(s.known, known)
	if len(s.answers) == 0 {
		s.cancel()
		return nil, ctx.Err()
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a.bundle, a.err
}

// fakeReporter records reports; it fails the first failN calls.
type fakeReporter struct {
	failN   int
	reports []client.Report
}

func (r *fakeReporter) Report(_ context.Context, rep client.Report) error {
	if r.failN > 0 {
		r.failN--
		return errors.New("api down")
	}
	r.reports = append(r.reports, rep)
	return nil
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newStore returns a state dir whose live haproxy.cfg is live at revision
// rev, or an empty one when live is "".
func newStore(t *testing.T, live string, rev int64) Store {
	t.Helper()
	s := Store{Dir: t.TempDir()}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	if live != "" {
		if err := os.WriteFile(s.LivePath("haproxy.cfg"), []byte(live), 0o600); err != nil {
			t.Fatal(err)
		}
		st := State{Revision: rev, Files: map[string]string{"haproxy.cfg": Digest(live)}}
		if err := s.SetState(st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func bundle(rev int64, files map[string]string) *client.Bundle {
	return &client.Bundle{Revision: rev, Node: "lb1", Files: files}
}
