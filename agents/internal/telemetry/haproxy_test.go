package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
)

func readStats(t *testing.T, file string) []haproxy.Stat {
	t.Helper()
	text, err := os.ReadFile("../haproxy/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := haproxy.ParseStats(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

func ptr[T any](v T) *T { return &v }

// The captures hold an HTTP service (5 answered requests and a 404 on
// vs-web) over a pool with a healthy, a refused, an unchecked, a disabled
// and a drained server, and an idle TCP service.
func TestHAProxyReadingsFromRealAnswers(t *testing.T) {
	want := []Reading{
		{Key: "frontend vs-web", Service: "web", Counters: [numCounters]uint64{Requests: 6, BytesIn: 629, BytesOut: 2740}},
		{
			Key: "server pool-web/up1", Pool: "web", Member: "up1", Counters: [numCounters]uint64{Requests: 3, BytesIn: 309, BytesOut: 1344},
			Health: &client.Health{Status: "up", Check: "L7OK", Detail: "Layer7 check passed", Code: ptr(200), LatencyMS: ptr(4)},
		},
		{
			Key: "server pool-web/down1", Pool: "web", Member: "down1",
			Health: &client.Health{Status: "down", Check: "L4CON", Detail: "Layer4 connection problem: Connection refused", LatencyMS: ptr(0)},
		},
		{
			Key: "server pool-web/nocheck", Pool: "web", Member: "nocheck", Counters: [numCounters]uint64{Requests: 3, BytesIn: 320, BytesOut: 1396},
			Health: &client.Health{Status: "unchecked"},
		},
		{Key: "server pool-web/off", Pool: "web", Member: "off", Health: &client.Health{Status: "maint"}},
		{
			Key: "server pool-web/drained", Pool: "web", Member: "drained",
			Health: &client.Health{Status: "drain", Check: "L7OK", Detail: "Layer7 check passed", Code: ptr(200), LatencyMS: ptr(2)},
		},
		{Key: "frontend vs-tcp", Service: "tcp"},
		{
			Key: "server pool-tcp/t1", Pool: "tcp", Member: "t1",
			Health: &client.Health{Status: "up", Check: "L4OK", Detail: "Layer4 check passed", LatencyMS: ptr(0)},
		},
	}
	for _, file := range []string{"show-stat-2.6.csv", "show-stat-3.0.csv"} {
		t.Run(file, func(t *testing.T) {
			if diff := cmp.Diff(want, HAProxyReadings(readStats(t, file))); diff != "" {
				t.Errorf("readings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// statLine is a one-line "show stat" answer with the given columns.
func statLine(t *testing.T, header, line string) haproxy.Stat {
	t.Helper()
	stats, err := haproxy.ParseStats("# " + header + "\n" + line + "\n")
	if err != nil || len(stats) != 1 {
		t.Fatalf("ParseStats: %v, %d lines", err, len(stats))
	}
	return stats[0]
}

func TestServerHealthStatusWords(t *testing.T) {
	const header = "pxname,svname,type,status,check_status,check_code,check_duration,check_desc,last_chk"
	tests := []struct {
		line string
		want client.Health
	}{
		{"pool-a,s,2,UP,L7OK,200,3,Layer7 check passed,", client.Health{Status: "up", Check: "L7OK", Detail: "Layer7 check passed", Code: ptr(200), LatencyMS: ptr(3)}},
		{"pool-a,s,2,UP 1/3,* L7STS,503,12,Layer7 wrong status,HTTP status check returned code <3C>503<3E>", client.Health{
			Status: "up", Check: "L7STS", Code: ptr(503), LatencyMS: ptr(12),
			Detail: "HAProxy status UP 1/3; Layer7 wrong status: HTTP status check returned code <3C>503<3E>",
		}},
		{"pool-a,s,2,DOWN 1/2,L7OK,200,5,Layer7 check passed,", client.Health{
			Status: "down", Check: "L7OK", Code: ptr(200), LatencyMS: ptr(5), Detail: "HAProxy status DOWN 1/2; Layer7 check passed",
		}},
		{"pool-a,s,2,DOWN,L4TOUT,,1001,Layer4 timeout,", client.Health{Status: "down", Check: "L4TOUT", Detail: "Layer4 timeout", LatencyMS: ptr(1001)}},
		{"pool-a,s,2,NOLB,L7OK,404,2,Layer7 check passed,", client.Health{Status: "drain", Check: "L7OK", Detail: "Layer7 check passed", Code: ptr(404), LatencyMS: ptr(2)}},
		{"pool-a,s,2,DRAIN (agent),,,,,", client.Health{Status: "drain", Detail: "HAProxy status DRAIN (agent)"}},
		{"pool-a,s,2,MAINT (via pool-b/s),,,,,", client.Health{Status: "maint", Detail: "HAProxy status MAINT (via pool-b/s)"}},
		{"pool-a,s,2,MAINT (resolution),,,,,", client.Health{Status: "maint", Detail: "HAProxy status MAINT (resolution)"}},
		{"pool-a,s,2,no check,,,,,", client.Health{Status: "unchecked"}},
		{"pool-a,s,2,STARTING,,,,,", client.Health{Status: "unchecked", Detail: "HAProxy status STARTING"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ServerHealth(statLine(t, header, tt.line))); diff != "" {
				t.Errorf("health mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Columns are found by name, whatever their order, and the counters come
// from the ones the brief of each object names.
func TestHAProxyReadingsCounters(t *testing.T) {
	const header = "type,bout,bin,pxname,svname,mode,scur,stot,req_tot,ereq,econ,eresp,hrsp_5xx,status"
	stats, err := haproxy.ParseStats("# " + header + "\n" +
		"0,500,100,vs-api,FRONTEND,http,4,10,25,2,,,3,OPEN\n" + // requests: req_tot; errors: ereq + 5xx
		"0,50,10,vs-db,FRONTEND,tcp,1,7,0,0,,,,OPEN\n" + // TCP: sessions
		"2,400,90,pool-api,a1,http,2,20,24,,1,2,3,no check\n" + // requests: stot; errors: econ + eresp + 5xx
		"1,400,90,pool-api,BACKEND,http,2,20,24,,1,2,3,UP\n" + // backends are not reported
		"0,1,1,stats,FRONTEND,http,0,3,3,0,,,0,OPEN\n" + // not the compiler's
		"2,1,1,other,s,http,0,3,3,,0,0,0,UP\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Reading{
		{Key: "frontend vs-api", Service: "api", Connections: 4, Counters: [numCounters]uint64{25, 5, 100, 500}},
		{Key: "frontend vs-db", Service: "db", Connections: 1, Counters: [numCounters]uint64{7, 0, 10, 50}},
		{Key: "server pool-api/a1", Pool: "api", Member: "a1", Connections: 2, Counters: [numCounters]uint64{20, 6, 90, 400},
			Health: &client.Health{Status: "unchecked"}},
	}
	if diff := cmp.Diff(want, HAProxyReadings(stats)); diff != "" {
		t.Errorf("readings mismatch (-want +got):\n%s", diff)
	}
}

// fakeRuntime answers "show stat" with a frontend whose req_tot is
// requests, from worker pids (one per CurrentWorker call; the last
// repeats).
type fakeRuntime struct {
	requests int
	pids     []int
}

func (f *fakeRuntime) Stats(context.Context) ([]haproxy.Stat, error) {
	return haproxy.ParseStats(fmt.Sprintf("# pxname,svname,type,mode,req_tot\nvs-web,FRONTEND,0,http,%d\n", f.requests))
}

func (f *fakeRuntime) CurrentWorker(context.Context) (int, error) {
	pid := f.pids[0]
	if len(f.pids) > 1 {
		f.pids = f.pids[1:]
	}
	return pid, nil
}

// After a reload the new worker counts from 0: everything it counted is
// the interval's, even when it exceeds what the old worker had counted (a
// counter that merely went backwards would miss that).
func TestHAProxySourceAcrossReloads(t *testing.T) {
	rt := &fakeRuntime{requests: 100, pids: []int{41}}
	c := &Collector{Sources: []Source{HAProxy{Stats: rt}}}
	count := func() int64 {
		t.Helper()
		services, _, err := c.Collect(context.Background())
		if err != nil || len(services) != 1 {
			t.Fatalf("collect: %v, %v", services, err)
		}
		return services[0].Requests
	}
	count() // primes
	rt.requests = 130
	if got := count(); got != 30 {
		t.Errorf("counted %d, want 30", got)
	}
	rt.requests, rt.pids = 150, []int{52} // reloaded: worker 52 counted 150 since
	if got := count(); got != 150 {
		t.Errorf("after a reload counted %d, want 150", got)
	}
	rt.requests, rt.pids = 160, []int{52, 63, 63, 63} // reloaded during the read: read again
	if got := count(); got != 160 {
		t.Errorf("after a reload during the read counted %d, want 160 (all of worker 63's)", got)
	}
	rt.pids = []int{63, 64, 65, 66}
	if _, _, err := c.Collect(context.Background()); err == nil || !strings.Contains(err.Error(), "reloaded twice") {
		t.Errorf("error = %v, want one about reloads during the read", err)
	}
}

func TestHAProxySourceNotRunning(t *testing.T) {
	readings, err := HAProxy{Stats: &fakeRuntime{}, Running: func() bool { return false }}.Read(context.Background())
	if err != nil || readings != nil {
		t.Errorf("Read = %v, %v; want nothing and no error while HAProxy does not run", readings, err)
	}
}
