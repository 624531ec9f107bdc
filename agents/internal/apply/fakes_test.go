package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
)

// fakeDaemon records calls and fails them on demand. With a journal, it
// also appends "<name> <call>" there, so that tests see the order of calls
// across daemons.
type fakeDaemon struct {
	running       bool
	checkErr      error
	checkErrs     []error // consumed one per Check call, before checkErr
	refuse        string  // Check fails, as HAProxy would, on a main file that holds this word
	startErr      error
	stopErr       error
	reloadErrs    []error // consumed one per Reload call
	onReload      func()  // runs at each Reload call, before it answers
	setServersErr error   // returned by the first SetServers call
	checked       map[string]string
	calls         []string
	name          string
	journal       *[]string
}

func (d *fakeDaemon) record(call string) {
	d.calls = append(d.calls, call)
	if d.journal != nil {
		*d.journal = append(*d.journal, d.name+" "+call)
	}
}

func (d *fakeDaemon) Check(_ context.Context, dir string) error {
	d.record("check")
	d.checked, _ = ReadFiles(dir)
	if d.refuse != "" && strings.Contains(d.checked[bundle.MainFile], d.refuse) {
		return fmt.Errorf("unknown keyword '%s'", d.refuse)
	}
	if len(d.checkErrs) > 0 {
		err := d.checkErrs[0]
		d.checkErrs = d.checkErrs[1:]
		return err
	}
	return d.checkErr
}

func (d *fakeDaemon) Running(context.Context) bool { return d.running }

func (d *fakeDaemon) Start(context.Context) error {
	d.record("start")
	if d.startErr == nil {
		d.running = true
	}
	return d.startErr
}

func (d *fakeDaemon) Reload(context.Context) error {
	d.record("reload")
	if d.onReload != nil {
		d.onReload()
	}
	if len(d.reloadErrs) == 0 {
		return nil
	}
	err := d.reloadErrs[0]
	d.reloadErrs = d.reloadErrs[1:]
	return err
}

func (d *fakeDaemon) Stop(context.Context) error {
	d.record("stop")
	if d.stopErr == nil {
		d.running = false
	}
	return d.stopErr
}

func (d *fakeDaemon) SetServers(_ context.Context, changes []bundle.ServerChange) error {
	call := fmt.Sprintf("set-servers %d", len(changes))
	for _, c := range changes {
		call += fmt.Sprintf(" %s=%d/%s", c.To.Name(), c.To.Weight, c.To.Admin)
	}
	d.record(call)
	err := d.setServersErr
	d.setServersErr = nil
	return err
}

// fakeSource answers polls from a script; once exhausted it cancels the run.
// With a clock, an answer may take time, and during an outage the API
// refuses connections, or (hang) lets each request run until it times out.
type fakeSource struct {
	answers []sourceAnswer
	known   []int64
	polls   []client.Poll
	cancel  context.CancelFunc
	clock   *fakeClock
	outage  *outage
}

type sourceAnswer struct {
	bundle *client.Bundle
	err    error
	took   time.Duration // how long the API held the request
}

// outage is when the fake API is out of reach: [from, to) on the fake clock.
type outage struct {
	from, to time.Time
	hang     bool
}

func (o *outage) on(now time.Time) bool { return o != nil && !now.Before(o.from) && now.Before(o.to) }

func (s *fakeSource) Desired(ctx context.Context, p client.Poll) (*client.Bundle, error) {
	s.known = append(s.known, p.Known)
	s.polls = append(s.polls, p)
	if s.clock != nil && s.outage.on(s.clock.now) {
		return nil, s.unreachable(ctx, p)
	}
	if len(s.answers) == 0 {
		s.cancel()
		return nil, ctx.Err()
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	if s.clock != nil {
		s.clock.now = s.clock.now.Add(a.took)
	}
	return a.bundle, a.err
}

// unreachable fails a poll: at once (refused), or when the poll's context
// or the client's own timeout (wait + 15 s) would end it.
func (s *fakeSource) unreachable(ctx context.Context, p client.Poll) error {
	if !s.outage.hang {
		return errors.New("connection refused")
	}
	took := p.Wait + 15*time.Second
	if deadline, ok := ctx.Deadline(); ok {
		took = min(took, time.Until(deadline).Round(time.Second))
	}
	s.clock.now = s.clock.now.Add(took)
	return context.DeadlineExceeded
}

// fakeClock is the agent's time: sleeping moves it on at once.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// fakeReporter records reports; it fails the first failN calls, and any
// while down says the API is down.
type fakeReporter struct {
	failN   int
	down    func() bool
	reports []client.Report
}

func (r *fakeReporter) Report(_ context.Context, rep client.Report) error {
	if r.failN > 0 || r.down != nil && r.down() {
		r.failN = max(r.failN-1, 0)
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

// newStore returns a state dir whose live set is files, loaded at revision
// rev, or an empty one when files is nil.
func newStore(t *testing.T, files map[string]string, rev int64) Store {
	t.Helper()
	s := Store{Dir: t.TempDir()}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	if files != nil {
		makeLive(t, s, rev, files)
		if err := s.SetState(State{Revision: rev, Files: Digests(files)}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// makeLive swaps files in as the live set without recording them, as an
// apply interrupted before its reload leaves them.
func makeLive(t *testing.T, s Store, rev int64, files map[string]string) {
	t.Helper()
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := s.Stage(rev, files)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Swap(dir, st.Files); err != nil {
		t.Fatal(err)
	}
}

// cfgOnly is a bundle's files holding just haproxy.cfg.
func cfgOnly(cfg string) map[string]string { return map[string]string{bundle.MainFile: cfg} }

// with returns files plus the given name/content pairs.
func with(files map[string]string, nameContent ...string) map[string]string {
	out := maps.Clone(files)
	for i := 0; i+1 < len(nameContent); i += 2 {
		out[nameContent[i]] = nameContent[i+1]
	}
	return out
}

// serversJSON renders a servers.json.
func serversJSON(t *testing.T, structure string, servers ...bundle.Server) string {
	t.Helper()
	b, err := json.Marshal(bundle.Servers{Structure: structure, Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newBundle(rev int64, files map[string]string) *client.Bundle {
	return &client.Bundle{Revision: rev, Node: "lb1", Files: files}
}
