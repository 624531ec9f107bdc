package telemetry

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
)

// scriptSource answers from a script, one answer per Read.
type scriptSource struct {
	name    string
	answers []sourceAnswer
}

type sourceAnswer struct {
	readings []Reading
	err      error
}

func (s *scriptSource) Name() string { return s.name }

func (s *scriptSource) Read(context.Context) ([]Reading, error) {
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a.readings, a.err
}

func frontend(requests, errs uint64, conns int64) Reading {
	return Reading{Key: "frontend vs-web", Service: "web", Connections: conns, Counters: [numCounters]uint64{requests, errs, requests * 100, requests * 1000}}
}

func server(name string, requests uint64, status string) Reading {
	return Reading{
		Key: "server pool-app/" + name, Pool: "app", Member: name, Counters: [numCounters]uint64{Requests: requests},
		Health: &client.Health{Status: status},
	}
}

func TestCollectorDeltas(t *testing.T) {
	src := &scriptSource{name: "haproxy", answers: []sourceAnswer{
		{readings: []Reading{frontend(100, 2, 3), server("s1", 60, "up")}},                        // primes
		{readings: []Reading{frontend(130, 2, 5), server("s1", 80, "up")}},                        // +30, +20
		{readings: []Reading{frontend(12, 1, 1), server("s1", 7, "up")}},                          // reload: counters restart
		{readings: []Reading{frontend(20, 1, 1), server("s1", 9, "up"), server("s2", 4, "down")}}, // s2 is new: all of it counts
		{err: errors.New("connection refused")},                                                   // left out
		{readings: []Reading{frontend(50, 1, 2), server("s1", 30, "up")}},                         // primes again
		{readings: []Reading{frontend(51, 1, 2), server("s1", 31, "up")}},
	}}
	c := &Collector{Sources: []Source{src, nil}}
	type step struct {
		Services []client.ServiceTelemetry
		Members  []client.MemberTelemetry
		Err      bool
	}
	web := func(conns, requests, errs int64) []client.ServiceTelemetry {
		return []client.ServiceTelemetry{{Service: "web", Traffic: client.Traffic{
			Connections: conns, Requests: requests, Errors: errs, BytesIn: requests * 100, BytesOut: requests * 1000,
		}}}
	}
	member := func(name string, requests int64, status string) client.MemberTelemetry {
		return client.MemberTelemetry{Pool: "app", Member: name, Traffic: client.Traffic{Requests: requests}, Health: client.Health{Status: status}}
	}
	want := []step{
		{Services: web(3, 0, 0), Members: []client.MemberTelemetry{member("s1", 0, "up")}},
		{Services: web(5, 30, 0), Members: []client.MemberTelemetry{member("s1", 20, "up")}},
		{Services: web(1, 12, 1), Members: []client.MemberTelemetry{member("s1", 7, "up")}},
		{Services: web(1, 8, 0), Members: []client.MemberTelemetry{member("s1", 2, "up"), member("s2", 4, "down")}},
		{Services: []client.ServiceTelemetry{}, Members: []client.MemberTelemetry{}, Err: true},
		{Services: web(2, 0, 0), Members: []client.MemberTelemetry{member("s1", 0, "up")}},
		{Services: web(2, 1, 0), Members: []client.MemberTelemetry{member("s1", 1, "up")}},
	}
	for i, w := range want {
		services, members, err := c.Collect(context.Background())
		got := step{services, members, err != nil}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("collect %d mismatch (-want +got):\n%s", i, diff)
		}
		if err != nil && err.Error() != "haproxy: connection refused" {
			t.Errorf("collect %d: error %q should name the source", i, err)
		}
	}
}

// A member behind two sources (or two IPVS services) is one entry: its
// counts summed, its health the worst.
func TestCollectorMergesMembers(t *testing.T) {
	l7 := &scriptSource{name: "haproxy", answers: []sourceAnswer{{readings: []Reading{server("s1", 5, "up")}}, {readings: []Reading{server("s1", 9, "up")}}}}
	l4 := &scriptSource{name: "ipvs", answers: []sourceAnswer{
		{readings: []Reading{{Key: "dest a", Pool: "app", Member: "s1", Connections: 1, Health: &client.Health{Status: "up"}}}},
		{readings: []Reading{{Key: "dest a", Pool: "app", Member: "s1", Connections: 2, Counters: [numCounters]uint64{Requests: 3},
			Health: &client.Health{Status: "down", Detail: "removed"}}}},
	}}
	c := &Collector{Sources: []Source{l7, l4}}
	_, _, _ = c.Collect(context.Background())
	_, members, err := c.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []client.MemberTelemetry{{Pool: "app", Member: "s1", Traffic: client.Traffic{Connections: 2, Requests: 7},
		Health: client.Health{Status: "down", Detail: "removed"}}}
	if diff := cmp.Diff(want, members); diff != "" {
		t.Errorf("members mismatch (-want +got):\n%s", diff)
	}
}
