package ha

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
)

func TestReason(t *testing.T) {
	tests := []struct {
		old, new State
		facts    Facts
		want     string
	}{
		{Master, Fault, Facts{Standby: true}, "standby requested by an operator"},
		{Backup, Fault, Facts{HAProxyDown: true}, "haproxy is not running on this node"},
		{Master, Fault, Facts{InterfaceDown: "eth0"}, "interface eth0 is down"},
		{Master, Fault, Facts{WitnessDown: "10.77.1.254"}, "witness 10.77.1.254 does not answer ping"},
		{Master, Fault, Facts{Standby: true, HAProxyDown: true},
			"standby requested by an operator; haproxy is not running on this node"},
		{Master, Fault, Facts{}, ReasonCheckFailed},
		{Backup, Master, Facts{}, ReasonNoMaster},
		{Master, Backup, Facts{}, "a higher-priority peer is master"},
		{Fault, Backup, Facts{}, "fault cleared"},
		{Stopped, Backup, Facts{}, "keepalived started"},
		{Stopped, Backup, Facts{Derived: true}, "keepalived started" + ReasonDerivedSuffix},
		{Master, Stopped, Facts{}, "keepalived stopped"},
		{Master, Stopped, Facts{Gone: true}, "keepalived is not running (killed or crashed)"},
		{Master, Stopped, Facts{Gone: true, VIPsRemoved: []string{"10.77.100.10/32", "10.77.100.11/32"}},
			"keepalived is not running (killed or crashed); the agent removed the VIPs it left: 10.77.100.10/32, 10.77.100.11/32"},
		{Master, Stopped, Facts{Restarted: true}, "keepalived was restarted"},
		{Backup, Stopped, Facts{Removed: true}, "removed from this node's configuration"},
	}
	for _, tt := range tests {
		if got := Reason(tt.old, tt.new, tt.facts); got != tt.want {
			t.Errorf("Reason(%s -> %s, %+v) = %q, want %q", tt.old, tt.new, tt.facts, got, tt.want)
		}
	}
}

func TestTracker(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var tr Tracker
	if events := tr.SetGroups(map[string]int{"web": 150, "db": 100}, at(0)); len(events) != 0 {
		t.Errorf("new groups gave events: %+v", events)
	}
	type step struct {
		group    string
		state    State
		priority int
		facts    Facts
		want     *client.Event
	}
	steps := []step{
		// The first state known is recorded without an event.
		{group: "web", state: Backup, priority: 150},
		{group: "db", state: Master, priority: -1},
		{group: "web", state: Master, priority: 150, want: &client.Event{
			Group: "web", OldState: "backup", NewState: "master", Priority: 150, Reason: ReasonNoMaster}},
		{group: "web", state: Master, priority: 150},
		{group: "web", state: Fault, priority: 150, facts: Facts{Standby: true}, want: &client.Event{
			Group: "web", OldState: "master", NewState: "fault", Priority: 150, Reason: ReasonStandby}},
		{group: "web", state: Backup, priority: 140, want: &client.Event{
			Group: "web", OldState: "fault", NewState: "backup", Priority: 140, Reason: ReasonFaultCleared}},
		{group: "nope", state: Master, priority: 1},
	}
	for i, s := range steps {
		e, ok := tr.Set(s.group, s.state, s.priority, at(100*(i+1)), s.facts)
		if ok != (s.want != nil) {
			t.Fatalf("step %d: event %v (%+v), want one: %v", i, ok, e, s.want != nil)
		}
		if s.want == nil {
			continue
		}
		s.want.At = at(100 * (i + 1))
		if diff := cmp.Diff(*s.want, e); diff != "" {
			t.Errorf("step %d: event mismatch (-want +got):\n%s", i, diff)
		}
	}
	since := func(ms int) *time.Time { t := at(ms); return &t }
	want := []client.VRRPStatus{
		{Group: "db", State: "master", Priority: 100, Since: since(200)},
		{Group: "web", State: "backup", Priority: 140, Since: since(600)},
	}
	if diff := cmp.Diff(want, tr.Statuses()); diff != "" {
		t.Errorf("statuses mismatch (-want +got):\n%s", diff)
	}

	// db leaves the configuration: a last event; a new group starts
	// unknown.
	events := tr.SetGroups(map[string]int{"web": 150, "app": 120}, at(1000))
	wantEvents := []client.Event{{At: at(1000), Group: "db", OldState: "master", NewState: "stopped", Priority: 100, Reason: ReasonRemoved}}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events of the removal mismatch (-want +got):\n%s", diff)
	}
	want = []client.VRRPStatus{
		{Group: "app", State: "unknown", Priority: 120, Since: since(1000)},
		{Group: "web", State: "backup", Priority: 140, Since: since(600)},
	}
	if diff := cmp.Diff(want, tr.Statuses()); diff != "" {
		t.Errorf("statuses after the removal mismatch (-want +got):\n%s", diff)
	}
	if got := tr.State("db"); got != Unknown {
		t.Errorf("State of a removed group = %s, want unknown", got)
	}
}
