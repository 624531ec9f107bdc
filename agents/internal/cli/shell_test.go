package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const mePage = `{"id": 1, "username": "admin", "role": "admin"}`

// shellEnv is an environment for the shell against url, signed in with a token,
// with HOME (the shell's configuration folder) in a fresh folder.
func shellEnv(t *testing.T, url, stdin string) (Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	home := t.TempDir()
	env := Env{
		Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Version: "test",
		Getenv: func(name string) string {
			switch name {
			case "FULCRUM_URL":
				return url
			case "FULCRUM_TOKEN":
				return "secret"
			case "HOME":
				return home
			case "EDITOR", "VISUAL":
				return "touch " + filepath.Join(home, "editor-ran")
			}
			return ""
		},
	}
	return env, &stdout, &stderr
}

func TestSplitLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"vs list", []string{"vs", "list"}},
		{"  fulcrum   pool show web ", []string{"pool", "show", "web"}},
		{`pool update web --set "description=a b"`, []string{"pool", "update", "web", "--set", "description=a b"}},
		{`pool update web --set description='x; y | z && w'`, []string{"pool", "update", "web", "--set", "description=x; y | z && w"}},
		{`pool show we\ b`, []string{"pool", "show", "we b"}},
		{"pool show $(id)", []string{"pool", "show", "$(id)"}}, // no substitution: a literal word
		{"pool show `id`", []string{"pool", "show", "`id`"}},
		{"pool show $HOME *", []string{"pool", "show", "$HOME", "*"}},
		{"# a comment", []string{}},
		{"", []string{}},
	}
	for _, tt := range tests {
		got, err := splitLine(tt.line)
		if err != nil {
			t.Errorf("splitLine(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitLine(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestSplitLineRefusesShellOperators(t *testing.T) {
	for _, line := range []string{"vs list | grep web", "vs list; bash", "vs list && id", "vs list > /tmp/x",
		"pool create -f - < /etc/passwd", "vs list &", `"unclosed`, "pool show (web)"} {
		if words, err := splitLine(line); err == nil {
			t.Errorf("splitLine(%q) = %q, want an error", line, words)
		}
	}
}

func TestShellDashCExitsWithTheCommandsStatus(t *testing.T) {
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	tests := []struct {
		line       string
		want       int
		wantStdout string
	}{
		{"pool list -q", ExitOK, "web\napi\n"},
		{"fulcrum pool list -q", ExitOK, "web\napi\n"},
		{"pool show db", ExitNotFound, ""},
		{"pool lst", ExitUsage, ""},
		{"", ExitOK, ""},
		{"exit", ExitOK, ""},
	}
	for _, tt := range tests {
		env, stdout, stderr := shellEnv(t, url, "")
		if code := RunShell(context.Background(), []string{"-c", tt.line}, env); code != tt.want {
			t.Errorf("-c %q: exit %d, want %d (stderr %q)", tt.line, code, tt.want, stderr)
		}
		if stdout.String() != tt.wantStdout {
			t.Errorf("-c %q: stdout %q, want %q", tt.line, stdout, tt.wantStdout)
		}
	}
	env, _, stderr := shellEnv(t, url, "")
	if code := RunShell(context.Background(), []string{"-l"}, env); code != ExitUsage || !strings.Contains(stderr.String(), "usage: fulcrum-shell [-c COMMAND]") {
		t.Errorf("fulcrum-shell -l: exit %d, stderr %q", code, stderr)
	}
	if len(f.requests) != 3 {
		t.Errorf("%d requests, want 3 (two lists, and one for show, which looks the name up)", len(f.requests))
	}
}

// TestShellRefusals checks that what could leave the shell or touch local files
// is refused with exit 2 and a message, before anything is read, written or sent.
func TestShellRefusals(t *testing.T) {
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("name: stolen\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, wantStderr string }{
		{"scp -t /tmp", `"scp" is not a fulcrum command`},
		{"/usr/lib/openssh/sftp-server", "is not a fulcrum command"},
		{"bash", `"bash" is not a fulcrum command`},
		{"rsync --server . /tmp", "is not a fulcrum command"},
		{"completion bash", "is not a fulcrum command"},
		{"vs list | bash", "no pipes, redirections or command lists"},
		{"pool edit web", "edit starts an editor"},
		{"pool create -f " + secret, "no local file"},
		{"pool create --file=" + secret, "no local file"},
		{"pool update web -f" + secret, "no local file"},
		{"backup export -f " + filepath.Join(outside, "backup.json"), "no local file"},
		{"backup restore " + secret, "no local file"},
		{"--config " + filepath.Join(outside, "c.yaml") + " pool list", "--config"},
		{"login --config " + filepath.Join(outside, "c.yaml") + " -u admin --password-stdin", "--config"},
		{"shell", "you are in the shell already"},
	}
	for _, tt := range tests {
		env, _, stderr := shellEnv(t, url, "pw\n")
		before := len(f.requests)
		if code := RunShell(context.Background(), []string{"-c", tt.line}, env); code != ExitUsage {
			t.Errorf("-c %q: exit %d, want %d (stderr %q)", tt.line, code, ExitUsage, stderr)
		}
		if !strings.Contains(stderr.String(), "restricted shell") || !strings.Contains(stderr.String(), tt.wantStderr) {
			t.Errorf("-c %q: stderr %q lacks %q", tt.line, stderr, tt.wantStderr)
		}
		for _, r := range f.requests[before:] {
			t.Errorf("-c %q sent %s %s", tt.line, r.method, r.path)
		}
		if _, err := os.Stat(filepath.Join(env.Getenv("HOME"), "editor-ran")); err == nil {
			t.Errorf("-c %q ran the editor", tt.line)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("files outside: %v, want only the secret", entries)
	}
}

func TestShellHelpHidesWhatItRefuses(t *testing.T) {
	_, url := serve(t, nil)
	env, stdout, _ := shellEnv(t, url, "help\npool --help\n")
	if code := RunShell(context.Background(), nil, env); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	out := stdout.String()
	for _, want := range []string{"restricted shell runs fulcrum commands", "virtual-service", "List pools"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	for _, hidden := range []string{"--config string", "  edit ", "completion", "  shell "} {
		if strings.Contains(out, hidden) {
			t.Errorf("help shows %q:\n%s", hidden, out)
		}
	}
}

func TestShellReadsLinesUntilExitOrEOF(t *testing.T) {
	_, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	tests := []struct {
		name, stdin string
		want        int
		wantStdout  string
	}{
		{"exit stops", "pool list -q\nnope\nexit\npool list -q\n", ExitUsage, "web\napi\n"},
		{"quit stops", "pool list -q\nquit\nnope\n", ExitOK, "web\napi\n"},
		{"EOF stops", "nope\n\n   \npool list -q", ExitOK, "web\napi\n"},
		{"nothing", "", ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, stdout, stderr := shellEnv(t, url, tt.stdin)
			if code := RunShell(context.Background(), nil, env); code != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.want, stderr)
			}
			if stdout.String() != tt.wantStdout {
				t.Errorf("stdout %q, want %q", stdout, tt.wantStdout)
			}
		})
	}
}

// TestShellCommandsReadTheNextLines checks that a command reading standard input
// gets the lines after its own, not what the shell read ahead, and that the
// configuration is in HOME whatever XDG_CONFIG_HOME says.
func TestShellCommandsReadTheNextLines(t *testing.T) {
	f, url := serve(t, map[string]answer{
		"POST /api/v1/auth/token/": {201, `{"id": 7, "name": "lb", "token": "s3cret", "role": "admin"}`},
		"GET /api/v1/auth/me/":     {200, mePage},
	})
	env, stdout, stderr := shellEnv(t, "", "login --url "+url+" -u admin --password-stdin\npw\nwhoami\n")
	xdg := t.TempDir()
	getenv := env.Getenv
	env.Getenv = func(name string) string {
		if name == "XDG_CONFIG_HOME" {
			return xdg
		}
		return getenv(name)
	}
	if code := RunShell(context.Background(), nil, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(f.requests[0].body, `"password":"pw"`) {
		t.Errorf("sign-in body %s", f.requests[0].body)
	}
	if !strings.HasSuffix(stdout.String(), "admin (role admin) at "+url+"\n") {
		t.Errorf("stdout %q", stdout)
	}
	if _, err := os.Stat(filepath.Join(env.Getenv("HOME"), ".config", "fulcrum", "config.yaml")); err != nil {
		t.Errorf("config not in HOME: %v", err)
	}
	if entries, _ := os.ReadDir(xdg); len(entries) != 0 {
		t.Errorf("XDG_CONFIG_HOME used: %v", entries)
	}
}

// slowAPI answers pool lists only when the request is given up, and tells when one arrives.
func slowAPI(t *testing.T) (string, chan struct{}) {
	arrived := make(chan struct{}, 10)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/pools/" {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(mePage))
	}))
	t.Cleanup(server.Close)
	return server.URL, arrived
}

func TestCtrlCCancelsTheCommandNotTheShell(t *testing.T) {
	url, arrived := slowAPI(t)
	env, stdout, stderr := shellEnv(t, url, "pool list\nwhoami\n")
	interrupts := make(chan os.Signal, 1)
	interrupts <- os.Interrupt // typed before the command: not for it
	env.Interrupts = interrupts
	done := make(chan int)
	go func() { done <- RunShell(context.Background(), nil, env) }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the list request never came")
	}
	time.Sleep(100 * time.Millisecond) // an early interrupt would have ended the command by now
	select {
	case code := <-done:
		t.Fatalf("the shell ended (exit %d) before Ctrl-C: %s", code, stderr)
	default:
	}
	interrupts <- os.Interrupt
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d, want the last command's 0 (stderr %q)", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not cancel the command")
	}
	if !strings.Contains(stdout.String(), "admin (role admin)") {
		t.Errorf("the next command did not run: stdout %q, stderr %q", stdout, stderr)
	}
}

// fakeTerminal is a terminal fed key by key: each write is one read of the shell.
type fakeTerminal struct {
	keys    *io.PipeWriter
	mu      sync.Mutex
	screen  bytes.Buffer
	raw     int
	restore int
}

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screen.Write(p)
}

func (f *fakeTerminal) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screen.String()
}

func newFakeTerminal() (*fakeTerminal, *Terminal) {
	reader, writer := io.Pipe()
	f := &fakeTerminal{keys: writer}
	return f, &Terminal{
		In: reader, Out: f,
		Raw: func() (func() error, error) {
			f.mu.Lock()
			f.raw++
			f.mu.Unlock()
			return func() error { f.mu.Lock(); f.restore++; f.mu.Unlock(); return nil }, nil
		},
		Size: func() (int, int, error) { return 100, 30, nil },
	}
}

func TestTerminalLineEditing(t *testing.T) {
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}, "GET /api/v1/auth/me/": {200, mePage}})
	env, stdout, stderr := shellEnv(t, url, "")
	fake, terminal := newFakeTerminal()
	env.Terminal = terminal
	done := make(chan int)
	go func() { done <- RunShell(context.Background(), nil, env) }()
	go func() {
		for _, keys := range []string{
			"pool sh",      // a line given up with Ctrl-C...
			"\x03",         // ...is not run, nor kept for the next
			"pool l\t-q\r", // Tab completes "list"
			"\x1b[A",       // up: the line before
			"\r",
			"nope\r",
			"\x04", // Ctrl-D on an empty line leaves
		} {
			if _, err := fake.keys.Write([]byte(keys)); err != nil {
				return // the shell left early: the checks below tell
			}
		}
	}()
	select {
	case code := <-done:
		if code != ExitUsage {
			t.Errorf("exit %d, want the last command's %d", code, ExitUsage)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the shell did not leave at Ctrl-D; screen %q", fake.text())
	}
	_ = fake.keys.Close()
	wantStdout := "Fulcrum test restricted shell on " + firstNonEmpty(hostLabel(), "this host") + ".\n" +
		"API " + url + ", signed in as admin (role admin).\n" +
		"Type 'help' for the commands, 'exit' or Ctrl-D to leave.\n" +
		"web\napi\nweb\napi\n"
	if stdout.String() != wantStdout {
		t.Errorf("stdout %q, want %q", stdout, wantStdout)
	}
	if !strings.Contains(stderr.String(), `"nope" is not a fulcrum command`) {
		t.Errorf("stderr %q", stderr)
	}
	screen := fake.text()
	if !strings.Contains(screen, shellPrompt()+"pool sh^C\n") || strings.Count(screen, shellPrompt()) != 5 {
		t.Errorf("screen %q", screen)
	}
	if fake.raw != 5 || fake.restore != 5 {
		t.Errorf("raw mode %d times, restored %d times, want 5 and 5 (one per line read)", fake.raw, fake.restore)
	}
	for _, r := range f.requests {
		if r.path == "/api/v1/pools/1/" {
			t.Error("the line given up with Ctrl-C ran")
		}
	}
}

func TestCompleteCommand(t *testing.T) {
	root := (&app{env: Env{Getenv: func(string) string { return "" }}, restricted: true}).rootCommand()
	tests := []struct{ before, want string }{
		{"vir", "virtual-service "},
		{"ce", "certificate "},
		{"fulcrum ce", "fulcrum certificate "},
		{"pool l", "pool list "},
		{"token d", "token delete "},
		{"member d", "member d"}, // delete, disable, drain: no longer prefix, no completion
		{"pool e", ""},           // edit is refused, so not offered
		{"c", ""},
		{"nope l", ""},
	}
	for _, tt := range tests {
		got, ok := completeCommand(root, tt.before)
		if tt.want == "" || tt.want == tt.before {
			if ok {
				t.Errorf("completeCommand(%q) = %q, want none", tt.before, got)
			}
			continue
		}
		if got != tt.want || !ok {
			t.Errorf("completeCommand(%q) = %q, %v, want %q", tt.before, got, ok, tt.want)
		}
	}
}

func TestFulcrumShellCommand(t *testing.T) {
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	tests := []struct {
		args               []string
		want               int
		wantStdout, stderr string
	}{
		{[]string{"shell", "-c", "pool list -q"}, ExitOK, "web\napi\n", ""},
		{[]string{"shell", "-c", "pool show db"}, ExitNotFound, "", "Error: no pool \"db\""},
		{[]string{"--url", url, "-q", "shell"}, ExitUsage, "", "the shell takes no --quiet, --url"},
	}
	for _, tt := range tests {
		env, stdout, stderr := shellEnv(t, url, "")
		if code := Run(context.Background(), tt.args, env); code != tt.want {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tt.args, code, tt.want, stderr)
		}
		if stdout.String() != tt.wantStdout || !strings.Contains(stderr.String(), tt.stderr) || strings.Contains(stderr.String(), "exit status") {
			t.Errorf("%q: stdout %q, stderr %q", tt.args, stdout, stderr)
		}
	}
	if len(f.requests) != 2 {
		t.Errorf("%d requests, want 2", len(f.requests))
	}
}

// TestShellEndsWhenItsContextDoes checks that SIGTERM (the context's end) ends a
// shell waiting for a line, and puts the terminal back.
func TestShellEndsWhenItsContextDoes(t *testing.T) {
	_, url := serve(t, map[string]answer{"GET /api/v1/auth/me/": {200, mePage}})
	for _, onTerminal := range []bool{false, true} {
		env, _, _ := shellEnv(t, url, "")
		keys, _ := io.Pipe() // nothing is ever typed
		env.Stdin = keys
		var fake *fakeTerminal
		if onTerminal {
			fake, env.Terminal = newFakeTerminal()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int)
		go func() { done <- RunShell(ctx, nil, env) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case code := <-done:
			if code != ExitError {
				t.Errorf("terminal %v: exit %d, want %d", onTerminal, code, ExitError)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("terminal %v: the shell did not end with its context", onTerminal)
		}
		if fake != nil {
			fake.mu.Lock()
			if fake.raw != 1 || fake.restore != 1 {
				t.Errorf("raw mode %d times, restored %d times, want 1 and 1", fake.raw, fake.restore)
			}
			fake.mu.Unlock()
		}
	}
}
