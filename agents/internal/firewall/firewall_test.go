package firewall

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/bundle"
)

// baseline is the appliance's firewall baseline, as fulcrum-firewall.service
// loads it.
const baseline = "../../../appliance/firewall/baseline.nft"

func TestParseTableHandle(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    int64
		wantErr bool
	}{
		{
			name: "present among others",
			out: `{"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}},
				{"table": {"family": "inet", "name": "fulcrum", "handle": 3}},
				{"table": {"family": "ip", "name": "fulcrum_firewall", "handle": 4}},
				{"table": {"family": "inet", "name": "fulcrum_firewall", "handle": 7}}]}`,
			want: 7,
		},
		{name: "absent", out: `{"nftables": [{"metainfo": {"version": "1.1.3"}}]}`},
		{name: "empty ruleset", out: `{"nftables": []}`},
		{name: "not JSON", out: `table inet fulcrum_firewall`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTableHandle([]byte(tt.out))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseTableHandle = %d, %v; want %d (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// netns starts a process holding a new user and network namespace (no
// root needed, nothing shared with the host's ruleset) and returns the
// exec prefix that runs a command in it.
func netns(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--net", "true").CombinedOutput(); err != nil {
		t.Skipf("no unprivileged user and network namespaces here: %v: %s", err, out)
	}
	holder := exec.Command("unshare", "--user", "--map-root-user", "--net", "sleep", "3600")
	if err := holder.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	prefix := []string{"nsenter", "--target", strconv.Itoa(holder.Process.Pid), "--user", "--net", "--preserve-credentials"}
	// The namespaces are the holder's once unshare has exec'd sleep.
	var out []byte
	for range 100 {
		var err error
		if out, err = command(append(slices.Clone(prefix), "nft", "list", "ruleset")).CombinedOutput(); err == nil {
			return prefix
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nft cannot run in the namespace of unshare (pid %d): %s", holder.Process.Pid, out)
	return nil
}

func command(argv []string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }

// fixture is a Manager in its own namespace with its live directory.
type fixture struct {
	m      *Manager
	prefix []string
	live   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatal("nft is not on PATH; install nftables (make deps) to run the firewall tests")
	}
	prefix := netns(t)
	live := t.TempDir()
	m := New("nft", prefix, live)
	m.Logger = slog.New(slog.DiscardHandler)
	return &fixture{m: m, prefix: prefix, live: live}
}

func (f *fixture) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := command(append(slices.Clone(f.prefix), args...)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
	return string(out)
}

func (f *fixture) loadBaseline(t *testing.T) {
	t.Helper()
	f.run(t, "nft", "--file", baseline)
}

// writeLive makes content the live firewall.nft.
func (f *fixture) writeLive(t *testing.T, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.live, bundle.FirewallFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// candidate writes content as a candidate set's firewall.nft.
func candidate(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, bundle.FirewallFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// elements lists the set's elements as nft prints them, without
// comments, sorted.
func (f *fixture) elements(t *testing.T, set string) []string {
	t.Helper()
	out := f.run(t, "nft", "list", "set", "inet", "fulcrum_firewall", set)
	_, body, found := strings.Cut(out, "elements = {")
	if !found {
		return nil
	}
	body, _, _ = strings.Cut(body, "}")
	var got []string
	for _, e := range strings.Split(body, ",") {
		e, _, _ = strings.Cut(strings.TrimSpace(e), " comment ")
		got = append(got, e)
	}
	slices.Sort(got)
	return got
}

const (
	webAndDNS = `flush set inet fulcrum_firewall services4
flush set inet fulcrum_firewall services6
flush set inet fulcrum_firewall cluster4
flush set inet fulcrum_firewall cluster6
add element inet fulcrum_firewall services4 {
    10.0.0.5 . tcp . 80 comment "web",
    10.0.0.6 . udp . 5000-5010 comment "dns"
}
add element inet fulcrum_firewall services6 {
    2001:db8::5 . tcp . 443 comment "v6"
}
`
	webOnly = `flush set inet fulcrum_firewall services4
flush set inet fulcrum_firewall services6
flush set inet fulcrum_firewall cluster4
flush set inet fulcrum_firewall cluster6
add element inet fulcrum_firewall services4 {
    10.0.0.5 . tcp . 80 comment "web"
}
`
)

func TestWithoutBaseline(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var checkErr *CheckError
	if err := f.m.Check(ctx, candidate(t, webOnly)); !errors.As(err, &checkErr) || !strings.Contains(err.Error(), "baseline is not loaded") {
		t.Errorf("Check without the baseline = %v, want a CheckError naming the baseline", err)
	}
	f.writeLive(t, webOnly)
	if err := f.m.Start(ctx); !errors.Is(err, errNoTable) {
		t.Errorf("Start without the baseline = %v, want %v", err, errNoTable)
	}
	if f.m.Running(ctx) {
		t.Error("Running without the baseline")
	}
	if err := f.m.Stop(ctx); err != nil {
		t.Errorf("Stop without the baseline: %v", err)
	}
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	f.loadBaseline(t)
	ctx := context.Background()
	if err := f.m.Check(ctx, candidate(t, webAndDNS)); err != nil {
		t.Errorf("Check(good) = %v", err)
	}
	for name, bad := range map[string]string{
		"unknown set":        "flush set inet fulcrum_firewall services5\n",
		"wrong family":       "add element inet fulcrum_firewall services4 { 2001:db8::1 . tcp . 80 }\n",
		"injected statement": "add element inet fulcrum_firewall services4 { 10.0.0.5 . tcp . 80 comment \"a\" }\nflush rulesett\n",
	} {
		err := f.m.Check(ctx, candidate(t, bad))
		var checkErr *CheckError
		if !errors.As(err, &checkErr) || !strings.Contains(checkErr.Output, "Error") {
			t.Errorf("Check(%s) = %v, want a CheckError with nft's error", name, err)
		}
	}
	if got := f.elements(t, "services4"); len(got) != 0 {
		t.Errorf("a check changed the sets: %v", got)
	}
}

func TestLoadReplaceAndEmpty(t *testing.T) {
	f := newFixture(t)
	f.loadBaseline(t)
	ctx := context.Background()

	f.writeLive(t, webAndDNS)
	if err := f.m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	got := [][]string{f.elements(t, "services4"), f.elements(t, "services6")}
	want := [][]string{{"10.0.0.5 . tcp . 80", "10.0.0.6 . udp . 5000-5010"}, {"2001:db8::5 . tcp . 443"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Start (-want +got):\n%s", diff)
	}
	if !f.m.Running(ctx) {
		t.Error("not Running after Start")
	}

	f.writeLive(t, webOnly)
	if err := f.m.Reload(ctx); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	got = [][]string{f.elements(t, "services4"), f.elements(t, "services6")}
	if diff := cmp.Diff([][]string{{"10.0.0.5 . tcp . 80"}, nil}, got); diff != "" {
		t.Errorf("after Reload (-want +got):\n%s", diff)
	}

	// The baseline loaded again empties the sets: no longer running, and a
	// start puts the elements back.
	f.loadBaseline(t)
	if f.m.Running(ctx) {
		t.Error("Running after the baseline was loaded again")
	}
	if err := f.m.Start(ctx); err != nil || !slices.Equal(f.elements(t, "services4"), []string{"10.0.0.5 . tcp . 80"}) {
		t.Errorf("Start after a baseline reload: %v, services4 %v", err, f.elements(t, "services4"))
	}

	if err := f.m.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, set := range bundle.FirewallSets {
		if got := f.elements(t, set); len(got) != 0 {
			t.Errorf("%s after Stop: %v", set, got)
		}
	}
	if f.m.Running(ctx) {
		t.Error("Running after Stop")
	}
}

// The compiler's own output must load into the baseline: the golden
// firewall.nft files are the contract.
func TestGoldenFilesLoad(t *testing.T) {
	paths, err := filepath.Glob("../../../api/compiler/tests/golden/*/firewall.nft")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden firewall.nft found (%v)", err)
	}
	f := newFixture(t)
	f.loadBaseline(t)
	ctx := context.Background()
	for _, path := range paths {
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.writeLive(t, string(content))
		if err := f.m.Check(ctx, f.live); err != nil {
			t.Errorf("%s: Check: %v", path, err)
		}
		if err := f.m.Reload(ctx); err != nil {
			t.Errorf("%s: load: %v", path, err)
		}
	}
}
