// Package telemetry gathers what the node's daemons count, every few
// seconds, and sends it to the API for the console's graphs and member
// health: each virtual service's and each pool member's current
// connections, and the requests, errors and bytes of the interval, from
// HAProxy's "show stat" (layer 7) and the kernel's IPVS counters (layer 4),
// with each member's health as HAProxy's checks or keepalived's see it.
//
// The daemons' counters are cumulative and restart at 0 when HAProxy
// reloads (a new worker), when a proxy is re-created or when keepalived
// re-adds a real server. The Collector keeps the previous reading of each
// counter and reports the difference; a counter that went backwards has
// restarted, so its new value is what it counted since.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"fulcrum/agents/internal/client"
)

// Counter indexes the cumulative counters of a Reading.
type Counter int

// The cumulative counters of a service or member.
const (
	Requests Counter = iota
	Errors
	BytesIn
	BytesOut
	numCounters
)

// Reading is one service's or member's figures as a source read them.
type Reading struct {
	// Key identifies the counters within their source across readings,
	// e.g. "server pool-web/s1"; it changes when the daemon's object is a
	// different one.
	Key string
	// Service names a virtual service, or Pool and Member a member.
	Service      string
	Pool, Member string
	// Connections is the current connection count.
	Connections int64
	// Counters are cumulative since the daemon's object was created.
	Counters [numCounters]uint64
	// Health is set for members.
	Health *client.Health
}

// Source reads one daemon's figures.
type Source interface {
	// Name says which daemon, for logs, e.g. "haproxy".
	Name() string
	// Read returns the current readings.
	Read(ctx context.Context) ([]Reading, error)
}

// Collector turns the sources' cumulative readings into the counts of the
// interval since the previous Collect. A source's first successful reading
// (at start, or after it failed) only primes its counters: it counts 0.
type Collector struct {
	// Sources are the daemons read; a nil entry is skipped.
	Sources []Source

	previous map[string]map[string][numCounters]uint64 // by source name, by key; nil: not primed
}

// Collect reads every source and returns what each service and member
// counted since the previous Collect. A source that fails is left out (its
// error is returned, joined with the others) and primes again next time.
func (c *Collector) Collect(ctx context.Context) ([]client.ServiceTelemetry, []client.MemberTelemetry, error) {
	if c.previous == nil {
		c.previous = map[string]map[string][numCounters]uint64{}
	}
	var services []client.ServiceTelemetry
	var members []client.MemberTelemetry
	var errs []error
	for _, src := range c.Sources {
		if src == nil {
			continue
		}
		readings, err := src.Read(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src.Name(), err))
			delete(c.previous, src.Name())
			continue
		}
		s, m := c.deltas(src.Name(), readings)
		services, members = append(services, s...), append(members, m...)
	}
	return mergeServices(services), mergeMembers(members), errors.Join(errs...)
}

// Reset forgets every previous reading: the next Collect only primes.
func (c *Collector) Reset() {
	c.previous = nil
}

// deltas computes one source's counts and keeps its readings for the next
// time.
func (c *Collector) deltas(source string, readings []Reading) ([]client.ServiceTelemetry, []client.MemberTelemetry) {
	prev, primed := c.previous[source]
	next := make(map[string][numCounters]uint64, len(readings))
	var services []client.ServiceTelemetry
	var members []client.MemberTelemetry
	for _, r := range readings {
		next[r.Key] = r.Counters
		var t client.Traffic
		if primed {
			t = traffic(r, prev[r.Key])
		}
		t.Connections = r.Connections
		if r.Health != nil {
			members = append(members, client.MemberTelemetry{Pool: r.Pool, Member: r.Member, Traffic: t, Health: *r.Health})
		} else {
			services = append(services, client.ServiceTelemetry{Service: r.Service, Traffic: t})
		}
	}
	c.previous[source] = next
	return services, members
}

// traffic is what r counted since prev. A key not read before counts from
// 0: its object was created since (HAProxy counts from 0 for a new proxy,
// IPVS for a new real server).
func traffic(r Reading, prev [numCounters]uint64) client.Traffic {
	var d [numCounters]int64
	for i, v := range r.Counters {
		if v >= prev[i] {
			d[i] = int64(v - prev[i])
		} else {
			d[i] = int64(v) // restarted: everything since counts
		}
	}
	return client.Traffic{Requests: d[Requests], Errors: d[Errors], BytesIn: d[BytesIn], BytesOut: d[BytesOut]}
}

// mergeServices sums the entries of a service listed more than once.
func mergeServices(in []client.ServiceTelemetry) []client.ServiceTelemetry {
	out := []client.ServiceTelemetry{}
	index := map[string]int{}
	for _, s := range in {
		if i, ok := index[s.Service]; ok {
			out[i].Traffic = add(out[i].Traffic, s.Traffic)
			continue
		}
		index[s.Service] = len(out)
		out = append(out, s)
	}
	return out
}

// mergeMembers sums the entries of a member listed more than once (a pool
// behind several IPVS services, or behind HAProxy and IPVS) and keeps the
// worst of their healths.
func mergeMembers(in []client.MemberTelemetry) []client.MemberTelemetry {
	out := []client.MemberTelemetry{}
	index := map[[2]string]int{}
	for _, m := range in {
		key := [2]string{m.Pool, m.Member}
		if i, ok := index[key]; ok {
			out[i].Traffic = add(out[i].Traffic, m.Traffic)
			if severity(m.Health.Status) > severity(out[i].Health.Status) {
				out[i].Health = m.Health
			}
			continue
		}
		index[key] = len(out)
		out = append(out, m)
	}
	return out
}

func add(a, b client.Traffic) client.Traffic {
	return client.Traffic{
		Connections: a.Connections + b.Connections, Requests: a.Requests + b.Requests, Errors: a.Errors + b.Errors,
		BytesIn: a.BytesIn + b.BytesIn, BytesOut: a.BytesOut + b.BytesOut,
	}
}

// severity orders health statuses from the least to the most telling.
func severity(status string) int {
	return slices.Index([]string{client.HealthUnchecked, client.HealthUp, client.HealthDrain, client.HealthMaint, client.HealthDown}, status)
}

// clamp turns a column HAProxy printed as a signed number into a counter;
// a negative one (never seen) counts as 0.
func clamp(v int64) uint64 {
	return uint64(max(v, 0))
}
