// Package ha is the node agent's side of VRRP high availability. keepalived
// runs VRRP from the compiler's keepalived.conf; from the bundle's
// keepalived.d/ha.json, the agent
//
//   - prepares the run directory keepalived shares with it before each
//     start and reload: the notify FIFO and the track files (standby,
//     haproxy), so that keepalived never starts on a stale or missing one;
//   - checks every 100 ms that HAProxy runs, and writes "1" to the haproxy
//     track file the moment it does not, which puts keepalived in FAULT:
//     the VIPs go and the peer takes over within a few advert intervals;
//   - follows each HA group's state on the notify FIFO and tells the API
//     every change, with the reason as far as the agent can tell it;
//   - removes the VIPs a killed keepalived left on the interfaces, so that
//     the peer that took over is their only owner.
package ha

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// Polling intervals.
const (
	// HAProxyPoll paces the HAProxy check: how late keepalived may learn
	// that HAProxy died.
	HAProxyPoll = 100 * time.Millisecond
	// KeepalivedPoll paces the keepalived check: how long VIPs a killed
	// keepalived left may stay.
	KeepalivedPoll = 100 * time.Millisecond
	// SlowPoll paces the rest: re-reading ha.json, checking that
	// keepalived holds the FIFO, retrying a VIP clean-up.
	SlowPoll = time.Second
)

// DefaultRunRoot is where every ha.json run_dir must be (the compiler's
// HA_RUN_DIR): the agent creates and writes files there as root.
const DefaultRunRoot = "/run/fulcrum-agent"

// Keepalived is the keepalived whose VRRP the Watcher follows;
// keepalived.Manager implements it.
type Keepalived interface {
	// PID returns the main process's pid, 0 when keepalived is not
	// running.
	PID() int
	// VRRPPID returns the VRRP child's pid, 0 when there is none.
	VRRPPID() int
}

// EventSink takes the events the Watcher produces; an outbox.Outbox
// implements it.
type EventSink interface {
	Add(events ...client.Event)
}

// Watcher keeps the agent's side of VRRP for the live ha.json. Prepare
// runs before keepalived starts or reloads; Run (or Step) does the rest.
type Watcher struct {
	// ConfFile is the live keepalived.d/ha.json; a missing file means the
	// node is in no HA group.
	ConfFile string
	// RunRoot must hold ha.json's run_dir; empty means DefaultRunRoot.
	RunRoot string
	// Keepalived is the keepalived to follow.
	Keepalived Keepalived
	// HAProxyRunning reports whether HAProxy runs; it is called every
	// HAProxyPoll, so it must be cheap.
	HAProxyRunning func() bool
	// Host looks at and changes the interfaces, pings witnesses.
	Host Host
	// Events receives every state change.
	Events EventSink
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now tells the time; nil means time.Now. Tests replace it.
	Now func() time.Time

	mu          sync.Mutex
	conf        *bundle.HA // nil: no HA groups
	confText    string
	tracker     Tracker
	haproxyFile string // the haproxy track file last written, and its value
	haproxyDown bool

	// Used by the loop (Run or Step) only.
	fifo       *fifo
	lastPID    int
	pidSince   time.Time // when lastPID was first seen
	confReadAt time.Time
	cleanedAt  time.Time
	fifoMisses int         // consecutive slow polls the VRRP child did not hold the FIFO
	fifoBroken atomic.Bool // so the states are read off the interfaces
	lastFail   map[string]string
}

// Prepare makes the run directory of the live ha.json ready for
// keepalived: the directory (0700), the FIFO, the standby track file from
// ha.json, the haproxy track file from HAProxy's state. The keepalived
// Manager runs it before every start and reload (its BeforeLoad).
func (w *Watcher) Prepare(ctx context.Context) error {
	text, h, err := w.readConf()
	if err != nil {
		return err
	}
	w.setConf(text, h)
	if h == nil {
		return nil
	}
	if err := makeRunDir(h.RunDir); err != nil {
		return err
	}
	if err := ensureFIFO(h.FIFO); err != nil {
		return err
	}
	handover := h.Standby && !trackFault(h.TrackFiles.Standby) && w.Keepalived.PID() != 0
	if err := writeTrackFile(h.TrackFiles.Standby, h.Standby); err != nil {
		return err
	}
	if handover {
		w.awaitFault(ctx, h)
	}
	if h.TrackFiles.HAProxy == "" {
		return nil
	}
	down := !w.HAProxyRunning()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := writeTrackFile(h.TrackFiles.HAProxy, down); err != nil {
		return err
	}
	w.haproxyFile, w.haproxyDown = h.TrackFiles.HAProxy, down
	return nil
}

// awaitFault waits, after an operator's standby was written, until every
// group of h is in FAULT (or about three adverts of the slowest group have
// passed). The running keepalived then gives the VIPs up the fast way,
// sending priority 0 so the peers take over at once; a reload that came
// first would start the instances in FAULT without a word, and the peers
// would wait out their master-down timers.
func (w *Watcher) awaitFault(ctx context.Context, h *bundle.HA) {
	slowest := 0
	for _, g := range h.Groups {
		slowest = max(slowest, g.AdvertMS)
	}
	deadline := time.Now().Add(time.Duration(3*slowest)*time.Millisecond + time.Second)
	for time.Now().Before(deadline) {
		faults := 0
		for _, s := range w.Statuses() {
			if slices.ContainsFunc(h.Groups, func(g bundle.HAGroup) bool { return g.Name == s.Group }) && s.State == string(Fault) {
				faults++
			}
		}
		if faults == len(h.Groups) {
			return
		}
		if clock.Sleep(ctx, 20*time.Millisecond) != nil {
			return
		}
	}
	w.logger().Warn("ha: standby written, but not every group reported FAULT before the reload")
}

// Run follows HAProxy, keepalived and the FIFO until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.watchHAProxy(ctx) }()
	defer wg.Wait()
	lines := make(chan Line, 16)
	tick := time.NewTicker(KeepalivedPoll)
	defer tick.Stop()
	defer w.closeFIFO()
	w.refresh(ctx, lines)
	for {
		select {
		case <-ctx.Done():
			return
		case l := <-lines:
			w.observe(ctx, l)
		case <-tick.C:
			w.refresh(ctx, lines)
		}
	}
}

// Step does one round without the FIFO, for the agent's --once: re-read
// ha.json, write the haproxy track file, follow keepalived and read the
// states off the interfaces.
func (w *Watcher) Step(ctx context.Context) {
	w.reloadConf()
	w.syncHAProxyFile()
	w.checkKeepalived(ctx)
}

// FIFOHeld reports whether keepalived's VRRP process was last seen holding
// the notify FIFO (or not seen missing it twice in a row); when not, the
// states are read off the interfaces.
func (w *Watcher) FIFOHeld() bool { return !w.fifoBroken.Load() }

// Statuses returns every HA group's state for the API.
func (w *Watcher) Statuses() []client.VRRPStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tracker.Statuses()
}

// refresh runs at every KeepalivedPoll; the slow part at every SlowPoll.
func (w *Watcher) refresh(ctx context.Context, lines chan<- Line) {
	if now := w.now(); now.Sub(w.confReadAt) >= SlowPoll {
		w.confReadAt = now
		w.reloadConf()
		if dropped := w.syncFIFO(lines); dropped > 0 {
			// The lines dropped as stale may have been the running keepalived's own, written
			// before this reader opened (an agent that starts late on a busy node): what they
			// said is read off the interfaces instead.
			if pid := w.Keepalived.PID(); pid != 0 {
				w.derive(ctx, w.groupNames(), pid)
			}
		}
		w.checkFIFOHeld(ctx)
	}
	w.checkKeepalived(ctx)
}

// watchHAProxy keeps the haproxy track file in line with HAProxy.
func (w *Watcher) watchHAProxy(ctx context.Context) {
	tick := time.NewTicker(HAProxyPoll)
	defer tick.Stop()
	for {
		w.syncHAProxyFile()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// SyncHAProxyFile writes the haproxy track file now if HAProxy's state
// changed since it was last written (the agent's supervisor calls it before
// it starts a stopped HAProxy again).
func (w *Watcher) SyncHAProxyFile() { w.syncHAProxyFile() }

// syncHAProxyFile writes the haproxy track file when HAProxy's state
// changed since it was last written.
func (w *Watcher) syncHAProxyFile() {
	w.mu.Lock()
	path := ""
	if w.conf != nil {
		path = w.conf.TrackFiles.HAProxy
	}
	w.mu.Unlock()
	if path == "" {
		return
	}
	down := !w.HAProxyRunning()
	w.mu.Lock()
	defer w.mu.Unlock()
	if path == w.haproxyFile && down == w.haproxyDown {
		return
	}
	err := makeRunDir(filepath.Dir(path))
	if err == nil {
		err = writeTrackFile(path, down)
	}
	if err != nil {
		w.logger().Error("ha: cannot write the haproxy track file", "err", err)
		return
	}
	if down {
		w.logger().Warn("ha: haproxy is not running; keepalived releases the VIPs", "track_file", path)
	} else if path == w.haproxyFile {
		w.logger().Info("ha: haproxy is running again", "track_file", path)
	}
	w.haproxyFile, w.haproxyDown = path, down
}

// readConf reads the live ha.json; nil when there is none. Its run_dir
// must be in RunRoot.
func (w *Watcher) readConf() (string, *bundle.HA, error) {
	b, err := os.ReadFile(w.ConfFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	h, err := bundle.ParseHA(string(b))
	if err != nil {
		return "", nil, err
	}
	root := w.RunRoot
	if root == "" {
		root = DefaultRunRoot
	}
	if !strings.HasPrefix(h.RunDir, filepath.Clean(root)+"/") {
		return "", nil, fmt.Errorf("%s: run_dir %s is not in %s", bundle.HAFile, h.RunDir, root)
	}
	return string(b), &h, nil
}

// makeRunDir creates the run directory, or makes it private if it exists.
func makeRunDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// reloadConf makes the live ha.json the one followed, keeping the
// previous one if it cannot be read.
func (w *Watcher) reloadConf() {
	text, h, err := w.readConf()
	if w.note("config", err) {
		return
	}
	w.setConf(text, h)
}

// setConf follows h from now on: groups it adds start unknown, groups it
// drops are reported stopped.
func (w *Watcher) setConf(text string, h *bundle.HA) {
	w.mu.Lock()
	if text == w.confText && (h == nil) == (w.conf == nil) {
		w.mu.Unlock()
		return
	}
	w.conf, w.confText = h, text
	prios := map[string]int{}
	if h != nil {
		for _, g := range h.Groups {
			prios[g.Name] = g.Priority
		}
	}
	events := w.tracker.SetGroups(prios, w.now())
	w.mu.Unlock()
	w.emit(events)
}

// group returns the configured group called name, and the configuration.
func (w *Watcher) group(name string) (bundle.HAGroup, bundle.HA, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conf == nil {
		return bundle.HAGroup{}, bundle.HA{}, false
	}
	for _, g := range w.conf.Groups {
		if g.Name == name {
			return g, *w.conf, true
		}
	}
	return bundle.HAGroup{}, bundle.HA{}, false
}

func (w *Watcher) groupNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conf == nil {
		return nil
	}
	names := make([]string, len(w.conf.Groups))
	for i, g := range w.conf.Groups {
		names[i] = g.Name
	}
	return names
}

// syncFIFO keeps a reader on the configured FIFO, reopening it when the
// path changes or the FIFO was replaced; it returns how many lines it
// dropped as stale when it (re)opened it.
func (w *Watcher) syncFIFO(lines chan<- Line) int {
	want := ""
	w.mu.Lock()
	if w.conf != nil && len(w.conf.Groups) > 0 {
		want = w.conf.FIFO
	}
	w.mu.Unlock()
	if w.fifo != nil && (want == "" || !w.fifo.same(want)) {
		w.closeFIFO()
	}
	if w.fifo != nil || want == "" {
		return 0
	}
	err := makeRunDir(filepath.Dir(want))
	if err == nil {
		err = ensureFIFO(want)
	}
	var f *fifo
	var stale int
	if err == nil {
		f, stale, err = openFIFO(want)
	}
	if w.note("fifo", err) {
		return 0
	}
	w.logger().Debug("ha: reading keepalived's notify fifo", "fifo", want, "stale_lines_dropped", stale)
	w.fifo, w.fifoMisses = f, 0
	w.fifoBroken.Store(false)
	go f.read(lines, func(err error) { w.logger().Warn("ha: notify fifo", "err", err) }, w.now)
	return stale
}

func (w *Watcher) closeFIFO() {
	if w.fifo != nil {
		w.fifo.close()
		w.fifo = nil
	}
}

// checkFIFOHeld notices a VRRP child that does not hold the FIFO open:
// keepalived 2.2 drops it at a reload when script_user comes after
// vrrp_notify_fifo in global_defs. The states are then read off the
// interfaces at every SlowPoll.
func (w *Watcher) checkFIFOHeld(ctx context.Context) {
	vrrp := w.Keepalived.VRRPPID()
	if w.fifo == nil || vrrp == 0 {
		w.fifoMisses = 0
		return
	}
	if holdsFile(vrrp, w.fifo.path) {
		if w.fifoBroken.Swap(false) {
			w.logger().Info("ha: keepalived writes to the notify fifo again", "fifo", w.fifo.path)
		}
		w.fifoMisses = 0
		return
	}
	// One miss may be keepalived reopening it during a reload.
	if w.fifoMisses++; w.fifoMisses == 2 {
		w.fifoBroken.Store(true)
		w.logger().Warn("ha: keepalived's VRRP process does not hold the notify fifo open; "+
			"reading the states off the interfaces instead (keepalived 2.2 drops the fifo at a reload "+
			"when script_user follows vrrp_notify_fifo in global_defs)", "fifo", w.fifo.path, "vrrp_pid", vrrp)
	}
	if w.fifoBroken.Load() && w.lastPID != 0 {
		w.derive(ctx, w.groupNames(), w.lastPID)
	}
}

// holdsFile reports whether process pid has the file at path open.
func holdsFile(pid int, path string) bool {
	want, err := os.Stat(path)
	if err != nil {
		return false
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if st, err := os.Stat(filepath.Join(dir, fd.Name())); err == nil && os.SameFile(st, want) {
			return true
		}
	}
	return false
}

// checkKeepalived follows keepalived's process: groups stop when it goes
// (after the VIPs it left are removed), and their states are read off the
// interfaces when the agent has not heard them from the keepalived that
// runs: at once when the agent never knew them, after a SlowPoll for a new
// keepalived process, which reports its groups on the FIFO as it starts.
func (w *Watcher) checkKeepalived(ctx context.Context) {
	pid := w.Keepalived.PID()
	names := w.groupNames()
	if pid != w.lastPID {
		w.pidSince = w.now()
	}
	defer func() { w.lastPID = pid }()
	if len(names) == 0 {
		return
	}
	switch {
	case pid == 0:
		w.stopAll(ctx, 0)
		return
	case w.lastPID != 0 && pid != w.lastPID:
		w.stopAll(ctx, pid)
	}
	settled := w.now().Sub(w.pidSince) >= SlowPoll
	var unheard []string
	w.mu.Lock()
	for _, name := range names {
		if s := w.tracker.State(name); s == Unknown || s == Stopped && w.tracker.stoppedBy(name) != pid && settled {
			unheard = append(unheard, name)
		}
	}
	w.mu.Unlock()
	if len(unheard) > 0 {
		w.derive(ctx, unheard, pid)
	}
}

// stopAll records every group as stopped, the keepalived process the
// agent followed being gone (pid 0) or replaced by pid. When none runs,
// it first removes the VIPs left behind, again at every SlowPoll.
func (w *Watcher) stopAll(ctx context.Context, pid int) {
	var removed map[string][]string
	if pid == 0 && (!w.allStopped() || w.now().Sub(w.cleanedAt) >= SlowPoll) {
		w.cleanedAt = w.now()
		removed = w.removeStaleVIPs(ctx)
	}
	at := w.now()
	var events []client.Event
	w.mu.Lock()
	for _, name := range w.tracker.names() {
		f := Facts{Gone: pid == 0, Restarted: pid != 0, VIPsRemoved: removed[name]}
		if e, ok := w.tracker.Set(name, Stopped, -1, at, f); ok {
			events = append(events, e)
		}
		if w.tracker.State(name) == Stopped && pid != 0 {
			w.tracker.setStoppedBy(name, w.lastPID)
		}
	}
	w.mu.Unlock()
	w.emit(events)
}

func (w *Watcher) allStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, name := range w.tracker.names() {
		if w.tracker.State(name) != Stopped {
			return false
		}
	}
	return true
}

// removeStaleVIPs deletes the groups' VIPs from their interfaces and
// returns those it removed, by group. It checks again just before that
// keepalived is not running: one starting would own them (it starts as
// backup, so it holds none for several advert intervals).
func (w *Watcher) removeStaleVIPs(ctx context.Context) map[string][]string {
	w.mu.Lock()
	var groups []bundle.HAGroup
	if w.conf != nil {
		groups = slices.Clone(w.conf.Groups)
	}
	w.mu.Unlock()
	addrs, err := w.Host.Addresses(ctx)
	if w.note("addresses", err) {
		return nil
	}
	removed := map[string][]string{}
	var errs []error
	for _, g := range groups {
		vips, _ := g.Prefixes() // validated
		for _, p := range vips {
			if !slices.Contains(addrs[g.Interface], p) || w.Keepalived.PID() != 0 {
				continue
			}
			if err := w.Host.DeleteAddress(ctx, g.Interface, p); err != nil {
				errs = append(errs, err)
				continue
			}
			w.logger().Warn("ha: removed a VIP keepalived left behind", "group", g.Name, "vip", p, "interface", g.Interface)
			removed[g.Name] = append(removed[g.Name], p.String())
		}
	}
	w.note("remove vips", errors.Join(errs...))
	return removed
}

// derive reads the states of the named groups off the interfaces: master
// when a VIP is on the group's interface, otherwise fault when a cause is
// visible, backup if not.
func (w *Watcher) derive(ctx context.Context, names []string, pid int) {
	addrs, err := w.Host.Addresses(ctx)
	if w.note("addresses", err) {
		return
	}
	at := w.now()
	for _, name := range names {
		g, h, ok := w.group(name)
		if !ok {
			continue
		}
		s, f := Backup, Facts{}
		vips, _ := g.Prefixes()
		if slices.ContainsFunc(vips, func(p netip.Prefix) bool { return slices.Contains(addrs[g.Interface], p) }) {
			s = Master
		} else if f = w.faultFacts(ctx, g, h); f.any() {
			s = Fault
		}
		f.Derived = true
		w.set(name, s, -1, at, f, pid)
	}
}

// observe applies one FIFO line.
func (w *Watcher) observe(ctx context.Context, l Line) {
	if l.Kind != KindInstance {
		w.logger().Debug("ha: notify fifo: sync group line ignored", "group", l.Name, "word", l.Word)
		return
	}
	g, h, ok := w.group(l.Name)
	if !ok {
		w.logger().Debug("ha: notify fifo: instance not in ha.json", "instance", l.Name, "word", l.Word)
		return
	}
	// Notice a keepalived that was replaced before taking its word.
	w.checkKeepalived(ctx)
	s, ok := l.State()
	if !ok {
		w.mu.Lock()
		w.tracker.Set(l.Name, w.tracker.State(l.Name), l.Priority, l.At, Facts{})
		w.mu.Unlock()
		return
	}
	var f Facts
	switch {
	case s == Fault:
		f = w.faultFacts(ctx, g, h)
	case l.Word == "DELETED":
		f.Removed = true
	}
	w.set(l.Name, s, l.Priority, l.At, f, w.Keepalived.PID())
}

// set records a state and emits the event if it changed.
func (w *Watcher) set(name string, s State, priority int, at time.Time, f Facts, pid int) {
	w.mu.Lock()
	e, changed := w.tracker.Set(name, s, priority, at, f)
	if s == Stopped {
		w.tracker.setStoppedBy(name, pid)
	}
	w.mu.Unlock()
	if changed {
		w.emit([]client.Event{e})
	}
}

// faultFacts gathers the causes of a FAULT the agent can see: the track
// files as keepalived reads them, the group's interface, its witness.
func (w *Watcher) faultFacts(ctx context.Context, g bundle.HAGroup, h bundle.HA) Facts {
	f := Facts{Standby: trackFault(h.TrackFiles.Standby)}
	if h.TrackFiles.HAProxy != "" {
		f.HAProxyDown = trackFault(h.TrackFiles.HAProxy)
	}
	var down []string
	for _, name := range append([]string{g.Interface}, g.TrackInterfaces...) {
		if up, err := w.Host.LinkUp(ctx, name); err == nil && !up {
			down = append(down, name)
		}
	}
	f.InterfaceDown = strings.Join(down, ", ")
	if g.Witness != "" && !w.Host.Ping(ctx, g.Witness) {
		f.WitnessDown = g.Witness
	}
	return f
}

func (w *Watcher) emit(events []client.Event) {
	for _, e := range events {
		w.logger().Info("ha: vrrp state changed", "group", e.Group, "from", e.OldState, "to", e.NewState,
			"priority", e.Priority, "reason", e.Reason)
	}
	if len(events) > 0 && w.Events != nil {
		w.Events.Add(events...)
	}
}

// note logs a failure of kind once until it changes or clears, and
// reports whether there was one.
func (w *Watcher) note(kind string, err error) bool {
	if w.lastFail == nil {
		w.lastFail = map[string]string{}
	}
	switch {
	case err != nil && err.Error() != w.lastFail[kind]:
		w.logger().Error("ha: "+kind, "err", err)
		w.lastFail[kind] = err.Error()
	case err == nil && w.lastFail[kind] != "":
		w.logger().Info("ha: " + kind + ": fine again")
		delete(w.lastFail, kind)
	}
	return err != nil
}

// now is the time, to the millisecond (the API's precision), in UTC.
func (w *Watcher) now() time.Time {
	t := time.Now()
	if w.Now != nil {
		t = w.Now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

func (w *Watcher) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// writeTrackFile writes "1\n" (fault) or "0\n" to a track file, atomically
// (keepalived notices the rename: it watches the directory with inotify).
func writeTrackFile(path string, fault bool) error {
	value := "0\n"
	if fault {
		value = "1\n"
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(value)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("track file %s: %w", path, err)
	}
	return nil
}

// trackFault reports whether a track file holds a non-zero value, which
// keepalived (weight 0) takes as a fault.
func trackFault(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	v := strings.TrimSpace(string(b))
	return v != "" && strings.TrimLeft(v, "0") != ""
}
