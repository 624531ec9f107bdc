package ha

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fulcrum/agents/internal/client"
)

// State is a group's VRRP state as the API takes it.
type State string

// The states of the contract.
const (
	Master  State = "master"
	Backup  State = "backup"
	Fault   State = "fault"
	Stopped State = "stopped"
	Unknown State = "unknown"
)

// Facts are what the agent found out about a group when its state changed;
// they turn into the event's reason.
type Facts struct {
	// Standby: the standby track file holds "1" (an operator's request).
	Standby bool
	// HAProxyDown: the haproxy track file holds "1".
	HAProxyDown bool
	// InterfaceDown names the group's interface and tracked interfaces that
	// are down, comma-separated.
	InterfaceDown string
	// WitnessDown is the witness address when it did not answer a ping.
	WitnessDown string
	// Gone: keepalived's process is gone without a word on the FIFO
	// (killed, crashed); Restarted: a new keepalived process replaced it.
	Gone, Restarted bool
	// VIPsRemoved lists the VIPs the agent removed after keepalived went
	// away without removing them.
	VIPsRemoved []string
	// Removed: the group is no longer in the node's configuration.
	Removed bool
	// Derived: the state was read off the interfaces (VIPs present or
	// not), not reported by keepalived.
	Derived bool
}

// any reports whether a cause of FAULT is known.
func (f Facts) any() bool {
	return f.Standby || f.HAProxyDown || f.InterfaceDown != "" || f.WitnessDown != ""
}

// Reasons, as the API shows them.
const (
	ReasonStandby       = "standby requested by an operator"
	ReasonHAProxy       = "haproxy is not running on this node"
	ReasonCheckFailed   = "a tracked check failed (a track_interface or the witness script; keepalived's log says which)"
	ReasonNoMaster      = "no higher-priority master was advertising (the peer is down, gave up, or has a lower priority)"
	ReasonHigherPeer    = "a higher-priority peer is master"
	ReasonFaultCleared  = "fault cleared"
	ReasonStarted       = "keepalived started"
	ReasonStopped       = "keepalived stopped"
	ReasonGone          = "keepalived is not running (killed or crashed)"
	ReasonRestarted     = "keepalived was restarted"
	ReasonRemoved       = "removed from this node's configuration"
	ReasonDerivedSuffix = " (read off the interfaces: keepalived's notify FIFO said nothing)"
)

// Reason explains a change from old to new with what the agent knows.
func Reason(old, new State, f Facts) string {
	r := reason(old, new, f)
	if f.Derived && old != Unknown && (new == Master || new == Backup) {
		r += ReasonDerivedSuffix
	}
	return r
}

func reason(old, new State, f Facts) string {
	switch new {
	case Fault:
		return faultReason(f)
	case Master:
		return ReasonNoMaster
	case Backup:
		switch old {
		case Master:
			return ReasonHigherPeer
		case Fault:
			return ReasonFaultCleared
		}
		return ReasonStarted
	case Stopped:
		switch {
		case f.Removed:
			return ReasonRemoved
		case f.Restarted:
			return ReasonRestarted
		case f.Gone && len(f.VIPsRemoved) > 0:
			return ReasonGone + "; the agent removed the VIPs it left: " + strings.Join(f.VIPsRemoved, ", ")
		case f.Gone:
			return ReasonGone
		}
		return ReasonStopped
	}
	return ""
}

// faultReason lists every cause of a FAULT the agent can see.
func faultReason(f Facts) string {
	var causes []string
	if f.Standby {
		causes = append(causes, ReasonStandby)
	}
	if f.HAProxyDown {
		causes = append(causes, ReasonHAProxy)
	}
	switch {
	case strings.Contains(f.InterfaceDown, ", "):
		causes = append(causes, fmt.Sprintf("interfaces %s are down", f.InterfaceDown))
	case f.InterfaceDown != "":
		causes = append(causes, fmt.Sprintf("interface %s is down", f.InterfaceDown))
	}
	if f.WitnessDown != "" {
		causes = append(causes, fmt.Sprintf("witness %s does not answer ping", f.WitnessDown))
	}
	if len(causes) == 0 {
		return ReasonCheckFailed
	}
	return strings.Join(causes, "; ")
}

// group is what the tracker knows of one HA group.
type group struct {
	state    State
	priority int
	since    time.Time
	// stoppedBy is the keepalived pid that was running when the group
	// stopped (0 if none): a different pid means keepalived came back.
	stoppedBy int
}

// Tracker keeps each HA group's state, priority and since-time and turns
// changes into events. It is not safe for concurrent use.
type Tracker struct {
	groups map[string]*group
}

// SetGroups makes the tracked groups those of names, with the configured
// priorities: new ones start unknown, dropped ones yield a stopped event
// unless they were stopped already.
func (t *Tracker) SetGroups(priorities map[string]int, at time.Time) []client.Event {
	if t.groups == nil {
		t.groups = map[string]*group{}
	}
	var events []client.Event
	for _, name := range t.names() {
		if _, ok := priorities[name]; !ok {
			if e, ok := t.Set(name, Stopped, -1, at, Facts{Removed: true}); ok {
				events = append(events, e)
			}
			delete(t.groups, name)
		}
	}
	for name, prio := range priorities {
		if _, ok := t.groups[name]; !ok {
			t.groups[name] = &group{state: Unknown, priority: prio, since: at}
		}
	}
	return events
}

// Set records that group name is in state s (priority -1: unchanged) and
// returns the event when the state changed. A change from unknown (the
// agent had not known the state yet) is recorded without an event.
func (t *Tracker) Set(name string, s State, priority int, at time.Time, f Facts) (client.Event, bool) {
	g, ok := t.groups[name]
	if !ok {
		return client.Event{}, false
	}
	if priority >= 0 {
		g.priority = priority
	}
	if g.state == s {
		return client.Event{}, false
	}
	old := g.state
	g.state, g.since = s, at
	if old == Unknown {
		return client.Event{}, false
	}
	return client.Event{
		At: at.UTC(), Group: name, OldState: string(old), NewState: string(s),
		Priority: g.priority, Reason: Reason(old, s, f),
	}, true
}

// State returns a group's state, Unknown for a group not tracked.
func (t *Tracker) State(name string) State {
	if g, ok := t.groups[name]; ok {
		return g.state
	}
	return Unknown
}

// stoppedBy and setStoppedBy read and record the keepalived pid a group
// stopped under.
func (t *Tracker) stoppedBy(name string) int {
	if g, ok := t.groups[name]; ok {
		return g.stoppedBy
	}
	return 0
}

func (t *Tracker) setStoppedBy(name string, pid int) {
	if g, ok := t.groups[name]; ok {
		g.stoppedBy = pid
	}
}

// Statuses lists every group's state for the API, sorted by group.
func (t *Tracker) Statuses() []client.VRRPStatus {
	out := make([]client.VRRPStatus, 0, len(t.groups))
	for _, name := range t.names() {
		g := t.groups[name]
		since := g.since.UTC()
		out = append(out, client.VRRPStatus{Group: name, State: string(g.state), Priority: g.priority, Since: &since})
	}
	return out
}

func (t *Tracker) names() []string {
	names := make([]string, 0, len(t.groups))
	for name := range t.groups {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
