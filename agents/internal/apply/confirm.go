package apply

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"fulcrum/agents/internal/client"
)

// DefaultConfirmGrace is how long past a revision's confirm deadline the
// agent waits for an answer from the API before it goes back by itself.
const DefaultConfirmGrace = 10 * time.Second

// Watch is the agent's own commit-confirm safety net. The API rolls back a
// revision nobody confirmed in time, but a revision that cuts the node off
// from the API (a VIP on the management address, a firewall rule, a broken
// route) never receives that rollback. So while the live revision awaits
// confirmation, the agent keeps the bundle the node ran before it, and goes
// back to it when it hears nothing from the API from the deadline until the
// deadline plus a grace. Any answer in that span, or the news that the
// revision was confirmed, ends the watch: the API decides.
type Watch struct {
	// Revision is the live revision, awaiting confirmation until ConfirmBy
	// (the API's clock: the nodes and the API keep time with NTP).
	Revision  int64     `json:"revision"`
	ConfirmBy time.Time `json:"confirm_by"`
	// Previous is the bundle the node ran before Revision.
	Previous client.Bundle `json:"previous"`
}

// goBackAt is when the agent goes back unless it heard from the API.
func (w *Watch) goBackAt(grace time.Duration) time.Time { return w.ConfirmBy.Add(grace) }

// poll asks the API for the desired revision. While the node watches a
// deadline it says so, so that a confirmation ends the poll at once; it
// asks the API to hold the request no later than the deadline (then not at
// all), so that a reachable API answers after the deadline and before the
// grace runs out, and it gives up waiting for an answer when the grace does.
//
// After the node refused a revision it asks for a newer one than that (a
// refused revision stays refused), so that the API holds the request until
// a fix is published and answers at once when it is, instead of sending
// the refused one back.
func (a *Agent) poll(ctx context.Context, known int64) (*client.Bundle, error) {
	p := client.Poll{Known: max(known, a.lastFailed), Wait: a.Wait}
	if w := a.watch; w != nil && w.Revision == known {
		now := a.now()
		p.Awaiting = p.Known == known
		p.Wait = min(a.Wait, max(ceilSecond(w.ConfirmBy.Sub(now)), 0))
		if left := w.goBackAt(a.ConfirmGrace).Sub(now); left > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, left)
			defer cancel()
		}
	}
	b, err := a.Source.Desired(ctx, p)
	if err == nil {
		a.heard()
	}
	return b, err
}

// heard notes a successful answer from the API: one at or after the
// deadline ends the watch.
func (a *Agent) heard() {
	if w := a.watch; w != nil && !a.now().Before(w.ConfirmBy) {
		a.logger().Info("confirm: the api answers after the deadline; it decides", "revision", w.Revision)
		a.setWatch(nil)
	}
}

// confirmed ends the watch when the API sends the live revision back
// without a deadline: someone confirmed it. It reports whether it did.
func (a *Agent) confirmed(b *client.Bundle, known int64) bool {
	if a.watch == nil || b.Revision != known || b.ConfirmBy != nil {
		return false
	}
	a.logger().Info("confirm: revision confirmed", "revision", known)
	a.setWatch(nil)
	return true
}

// previousOf returns the bundle the node runs now if b awaits
// confirmation, nil otherwise or when there is nothing to go back to.
func (a *Agent) previousOf(b *client.Bundle) *client.Bundle {
	if b.ConfirmBy == nil {
		return nil
	}
	st, err := a.Applier.Store.State()
	if err != nil {
		a.logger().Warn("confirm: cannot read the running revision; no going back", "revision", b.Revision, "err", err)
		return nil
	}
	live, err := a.Applier.Store.Live()
	if err != nil || !isLoaded(st, live) {
		a.logger().Warn("confirm: nothing loaded to go back to", "revision", b.Revision, "err", err)
		return nil
	}
	return &client.Bundle{Revision: st.Revision, Node: b.Node, Files: live}
}

// watchAfter starts watching the deadline of b, just applied, when it
// awaits confirmation and changed the node's files; any other revision
// applied ends the watch.
func (a *Agent) watchAfter(b *client.Bundle, previous *client.Bundle) {
	if previous == nil || maps.Equal(Digests(previous.Files), Digests(b.Files)) {
		a.setWatch(nil)
		return
	}
	w := &Watch{Revision: b.Revision, ConfirmBy: *b.ConfirmBy, Previous: *previous}
	a.logger().Info("confirm: watching the deadline", "revision", b.Revision, "confirm_by", w.ConfirmBy,
		"go_back_at", w.goBackAt(a.ConfirmGrace), "previous", previous.Revision)
	a.setWatch(w)
}

// goBackIfCutOff goes back to the previous bundle once the grace after the
// deadline ran out without an answer from the API. It reports whether it
// did (successfully or not).
func (a *Agent) goBackIfCutOff(ctx context.Context) bool {
	w := a.watch
	if w == nil || a.now().Before(w.goBackAt(a.ConfirmGrace)) {
		return false
	}
	a.setWatch(nil)
	why := fmt.Sprintf("no contact with the API within %s after r%d's confirm deadline", seconds(a.ConfirmGrace), w.Revision)
	r := a.Applier.Apply(ctx, &w.Previous)
	if r.State != client.StateApplied {
		msg := fmt.Sprintf("%s: going back to r%d failed, so r%d stays: %s", why, w.Previous.Revision, w.Revision, r.Message)
		a.logger().Error("confirm: "+msg, "revision", w.Revision)
		a.queueReport(client.Report{Revision: w.Revision, State: client.StateApplied, Message: msg})
		return true
	}
	a.logger().Error("confirm: "+why+"; went back", "revision", w.Revision, "now", w.Previous.Revision)
	a.queueReport(client.Report{Revision: w.Revision, State: client.StateFailed,
		Message: fmt.Sprintf("%s: went back to r%d", why, w.Previous.Revision)})
	a.queueReport(client.Report{Revision: w.Previous.Revision, State: client.StateApplied,
		Message: fmt.Sprintf("%s (went back from r%d: %s)", r.Message, w.Revision, why)})
	return true
}

// pause sleeps d, but no later than when the watch would go back.
func (a *Agent) pause(ctx context.Context, d time.Duration) error {
	if w := a.watch; w != nil {
		d = min(d, max(w.goBackAt(a.ConfirmGrace).Sub(a.now()), 0))
	}
	return a.sleep(ctx, d)
}

// loadWatch reads the watch a previous run of the agent left, once; one
// about another revision than the live one is stale.
func (a *Agent) loadWatch() {
	if a.watchLoaded {
		return
	}
	a.watchLoaded = true
	w, err := a.Applier.Store.Watch()
	if err != nil {
		a.logger().Warn("confirm: cannot read the watch; dropping it", "err", err)
	}
	if w == nil && err == nil {
		return
	}
	if rev, rerr := a.Applier.Store.Revision(); err != nil || rerr != nil || rev != w.Revision {
		if err := a.Applier.Store.SetWatch(nil); err != nil {
			a.logger().Warn("confirm: cannot remove the watch", "err", err)
		}
		return
	}
	a.watch = w
	a.logger().Info("confirm: still watching a deadline", "revision", w.Revision, "confirm_by", w.ConfirmBy)
}

// setWatch records the watch in memory and in the state directory; a
// failure to record only costs the net across a restart, so it is logged.
func (a *Agent) setWatch(w *Watch) {
	if w == nil && a.watch == nil {
		return
	}
	a.watch = w
	if err := a.Applier.Store.SetWatch(w); err != nil {
		a.logger().Warn("confirm: cannot record the watch", "err", err)
	}
}

// ceilSecond rounds d up to whole seconds, the unit of the long-poll wait.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// seconds writes d as the API writes durations: "10 s", "2.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
