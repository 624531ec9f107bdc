package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
)

// The compiler's proxy names (api/compiler/templates/haproxy/haproxy.cfg.j2):
// "frontend vs-<service>", "backend pool-<pool>" with "server <member>".
const (
	frontendPrefix = "vs-"
	backendPrefix  = "pool-"
)

// HAProxyRuntime is HAProxy's runtime API; *haproxy.Manager implements it.
type HAProxyRuntime interface {
	// Stats reads "show stat" from the current worker.
	Stats(ctx context.Context) ([]haproxy.Stat, error)
	// CurrentWorker is that worker's PID.
	CurrentWorker(ctx context.Context) (int, error)
}

// HAProxy reads layer-7 figures from HAProxy's current worker. Its counters
// are keyed by the worker's PID: after a reload every counter is a new one,
// counting from 0 since the reload.
type HAProxy struct {
	// Stats reads "show stat".
	Stats HAProxyRuntime
	// Running says whether HAProxy runs at all; nil means it always does.
	// A node with no HAProxy yet has nothing to read, which is no error.
	Running func() bool
}

// Name implements Source.
func (h HAProxy) Name() string { return "haproxy" }

// Read implements Source.
func (h HAProxy) Read(ctx context.Context) ([]Reading, error) {
	if h.Running != nil && !h.Running() {
		return nil, nil
	}
	// A reload between the PID and the stats would mix two workers'
	// counters: read again, once.
	for range 2 {
		before, err := h.Stats.CurrentWorker(ctx)
		if err != nil {
			return nil, err
		}
		stats, err := h.Stats.Stats(ctx)
		if err != nil {
			return nil, err
		}
		after, err := h.Stats.CurrentWorker(ctx)
		if err != nil {
			return nil, err
		}
		if before == after {
			readings := HAProxyReadings(stats)
			for i := range readings {
				readings[i].Key = fmt.Sprintf("worker %d %s", after, readings[i].Key)
			}
			return readings, nil
		}
	}
	return nil, errors.New("HAProxy reloaded twice while being read")
}

// HAProxyReadings picks the compiler's frontends (services) and servers
// (members) out of "show stat".
//
// A frontend counts its HTTP requests (req_tot; its sessions, stot, in TCP
// mode), and as errors the requests it
// could not parse (ereq) and the 5xx it answered (hrsp_5xx). A server
// counts its sessions (stot; each HTTP request is one), and as errors its
// connection and response failures (econ, eresp) and the 5xx it answered.
func HAProxyReadings(stats []haproxy.Stat) []Reading {
	var out []Reading
	for _, s := range stats {
		switch {
		case s.Type() == haproxy.TypeFrontend && strings.HasPrefix(s.Proxy(), frontendPrefix):
			out = append(out, Reading{
				Key:         "frontend " + s.Proxy(),
				Service:     strings.TrimPrefix(s.Proxy(), frontendPrefix),
				Connections: num(s, "scur"),
				Counters:    counters(frontendRequests(s), sum(s, "ereq", "hrsp_5xx"), num(s, "bin"), num(s, "bout")),
			})
		case s.Type() == haproxy.TypeServer && strings.HasPrefix(s.Proxy(), backendPrefix):
			health := ServerHealth(s)
			out = append(out, Reading{
				Key:         "server " + s.Proxy() + "/" + s.Name(),
				Pool:        strings.TrimPrefix(s.Proxy(), backendPrefix),
				Member:      s.Name(),
				Connections: num(s, "scur"),
				Counters:    counters(first(s, "stot", "req_tot"), sum(s, "econ", "eresp", "hrsp_5xx"), num(s, "bin"), num(s, "bout")),
				Health:      &health,
			})
		}
	}
	return out
}

// statusWords maps the first word of HAProxy's server status to the API's.
// HAProxy adds what is under way: "UP 1/3" is up with one failed check
// towards going down, "DOWN 1/2" down and recovering, "MAINT (via b/s)"
// in maintenance through a tracked server, "DRAIN (agent)" drained by its
// agent; NOLB is up but taking no new load (a 404 from http-check
// disable-on-404), which for the operator is a drain.
var statusWords = map[string]string{
	"UP":    client.HealthUp,
	"DOWN":  client.HealthDown,
	"NOLB":  client.HealthDrain,
	"DRAIN": client.HealthDrain,
	"MAINT": client.HealthMaint,
}

// ServerHealth is a server's health from its "show stat" line: the status,
// the last check's result (check_status, without the "* " HAProxy puts in
// front while a check runs), its description (check_desc, with last_chk's
// details), HTTP code (check_code) and duration in ms (check_duration).
func ServerHealth(s haproxy.Stat) client.Health {
	raw := strings.TrimSpace(s.Field("status"))
	word, _, _ := strings.Cut(raw, " ")
	status, known := statusWords[word]
	h := client.Health{Status: status}
	if !known { // "no check", or a word of a later HAProxy
		h.Status = client.HealthUnchecked
		if raw != "no check" {
			h.Detail = "HAProxy status " + raw
		}
		return h
	}
	h.Check = strings.TrimPrefix(s.Field("check_status"), "* ")
	var details []string
	if raw != word {
		details = append(details, "HAProxy status "+raw)
	}
	desc, last := s.Field("check_desc"), s.Field("last_chk")
	switch {
	case desc != "" && last != "" && last != desc:
		details = append(details, desc+": "+last)
	case desc != "":
		details = append(details, desc)
	case last != "":
		details = append(details, last)
	}
	h.Detail = strings.Join(details, "; ")
	if h.Check != "" {
		h.Code = optional(s, "check_code")
		h.LatencyMS = optional(s, "check_duration")
	}
	return h
}

// frontendRequests is an HTTP frontend's requests, a TCP one's sessions.
func frontendRequests(s haproxy.Stat) int64 {
	if v, ok := s.Int("req_tot"); ok && s.Field("mode") != "tcp" {
		return v
	}
	return num(s, "stot")
}

func counters(requests, errs, in, out int64) [numCounters]uint64 {
	return [numCounters]uint64{Requests: clamp(requests), Errors: clamp(errs), BytesIn: clamp(in), BytesOut: clamp(out)}
}

// num is a column's value, 0 when empty.
func num(s haproxy.Stat, name string) int64 {
	v, _ := s.Int(name)
	return v
}

// first is the first of the columns that holds a number.
func first(s haproxy.Stat, names ...string) int64 {
	for _, name := range names {
		if v, ok := s.Int(name); ok {
			return v
		}
	}
	return 0
}

func sum(s haproxy.Stat, names ...string) int64 {
	var total int64
	for _, name := range names {
		total += num(s, name)
	}
	return total
}

func optional(s haproxy.Stat, name string) *int {
	v, ok := s.Int(name)
	if !ok {
		return nil
	}
	i := int(v)
	return &i
}
