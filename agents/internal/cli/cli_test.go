package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeAPI answers one canned response per "METHOD path" and records requests.
type fakeAPI struct {
	t        *testing.T
	answers  map[string]answer
	requests []recorded
}

type answer struct {
	status int
	body   string
}

type recorded struct {
	method, path, query, ifMatch, auth, body string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("If-Match"), r.Header.Get("Authorization"), string(body)})
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"detail": "Not found."}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

const poolsPage = `{"count": 2, "next": null, "previous": null, "results": [
 {"id": 1, "name": "web", "algorithm": "round-robin", "members": [{"id": 1}, {"id": 2}], "health_check": {"type": "http"}, "description": "", "version": 4},
 {"id": 2, "name": "api", "algorithm": "least-connections", "members": [], "health_check": null, "description": "JSON API", "version": 1}]}`

// run runs the command line against the fake API with a fresh config folder.
func run(t *testing.T, f *fakeAPI, url string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Version: "test",
		Getenv: func(name string) string {
			switch name {
			case "FULCRUM_URL":
				return url
			case "FULCRUM_TOKEN":
				return "secret"
			case "XDG_CONFIG_HOME":
				return t.TempDir()
			}
			return ""
		},
	}
	code := Run(context.Background(), args, env)
	return code, stdout.String(), stderr.String()
}

func serve(t *testing.T, answers map[string]answer) (*fakeAPI, string) {
	f := &fakeAPI{t: t, answers: answers}
	server := httptest.NewServer(f)
	t.Cleanup(server.Close)
	return f, server.URL
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		answer     answer
		wantCode   int
		wantStderr []string
	}{
		{"ok", answer{200, poolsPage}, ExitOK, nil},
		{"invalid", answer{400, `{"limit": ["Must be at most 1000."]}`}, ExitInvalid, []string{"Error: 400 Bad Request", "  limit: Must be at most 1000."}},
		{"unprocessable", answer{422, `{"detail": "No."}`}, ExitInvalid, []string{"Error: No. (422 Unprocessable Entity)"}},
		{"unauthorized", answer{401, `{"detail": "This API token is revoked."}`}, ExitAuth, []string{"Error: This API token is revoked. (401 Unauthorized)"}},
		{"forbidden", answer{403, `{"detail": "Viewers may only read."}`}, ExitAuth, []string{"Error: Viewers may only read. (403 Forbidden)"}},
		{"not found", answer{404, `{"detail": "Not found."}`}, ExitNotFound, nil},
		{"conflict", answer{409, `{"detail": "Changed.", "version": 7}`}, ExitConflict, []string{"Error: Changed. (409 Conflict)", "  (current version: 7; read the object again and repeat your change)"}},
		{"server", answer{500, "<h1>Server Error</h1>"}, ExitServer, []string{"Error: <h1>Server Error</h1> (500 Internal Server Error)"}},
		{"throttled", answer{429, `{"detail": "Slow down."}`}, ExitError, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := serve(t, map[string]answer{"GET /api/v1/pools/": tt.answer})
			code, _, stderr := run(t, f, url, "pool", "list")
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			for _, line := range tt.wantStderr {
				if !strings.Contains(stderr, line+"\n") {
					t.Errorf("stderr %q lacks line %q", stderr, line)
				}
			}
		})
	}
}

func TestExitCodesWithoutAnAnswer(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	closed := server.URL
	server.Close()
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	tests := []struct {
		name string
		url  string
		args []string
		want int
	}{
		{"unreachable", closed, []string{"pool", "list"}, ExitUnreachable},
		{"unknown command", url, []string{"pool", "lst"}, ExitUsage},
		{"unknown flag", url, []string{"pool", "list", "--nope"}, ExitUsage},
		{"bad output", url, []string{"-o", "xml", "pool", "list"}, ExitUsage},
		{"too many arguments", url, []string{"pool", "list", "web"}, ExitUsage},
		{"no such name", url, []string{"pool", "show", "db"}, ExitNotFound},
		{"bad --set", url, []string{"pool", "create", "--set", "nokey"}, ExitUsage},
		{"bad revision", url, []string{"rollback", "latest"}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, stderr := run(t, f, tt.url, tt.args...); code != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.want, stderr)
			}
		})
	}
}

func TestNotSignedIn(t *testing.T) {
	var stderr bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv: func(name string) string {
			if name == "XDG_CONFIG_HOME" {
				return t.TempDir()
			}
			return ""
		}}
	if code := Run(context.Background(), []string{"--url", "http://127.0.0.1:1", "pool", "list"}, env); code != ExitAuth {
		t.Errorf("exit code %d, want %d", code, ExitAuth)
	}
	if !strings.Contains(stderr.String(), "not signed in") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestListOutputs(t *testing.T) {
	f, url := serve(t, map[string]answer{"GET /api/v1/pools/": {200, poolsPage}})
	_, table, _ := run(t, f, url, "pool", "list")
	want := "" +
		"NAME  ALGORITHM          MEMBERS  HEALTH CHECK  DESCRIPTION\n" +
		"web   round-robin        2        http          -\n" +
		"api   least-connections  0        -             JSON API\n"
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	_, quiet, _ := run(t, f, url, "pool", "list", "-q")
	if quiet != "web\napi\n" {
		t.Errorf("-q printed %q", quiet)
	}
	_, out, _ := run(t, f, url, "pool", "list", "-o", "json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	var page struct{ Results []map[string]any }
	_ = json.Unmarshal([]byte(poolsPage), &page)
	if diff := cmp.Diff(page.Results, got); diff != "" {
		t.Errorf("-o json is not the API's objects (-want +got):\n%s", diff)
	}
	_, yaml, _ := run(t, f, url, "pool", "list", "-o", "yaml")
	if !strings.HasPrefix(yaml, "- id: 1\n  name: web\n") {
		t.Errorf("-o yaml starts %q", yaml)
	}
}

func TestUpdateSendsTheVersionRead(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantIfMatch string
		wantBody    map[string]any
	}{
		{"read", []string{"--set", "description=front"}, `"4"`, map[string]any{"description": "front"}},
		{"flag", []string{"--set", "description=front", "--if-version", "2"}, `"2"`, map[string]any{"description": "front"}},
		{"file", []string{"-f", "testdata/pool-web.yaml"}, `"3"`, map[string]any{"description": "from a file", "algorithm": "least-connections", "health_check": nil}},
		{"json values", []string{"--set", "pool_max_conn=10", "--set", "tls=true", "--set", "persistence.type=cookie"}, `"4"`,
			map[string]any{"pool_max_conn": 10.0, "tls": true, "persistence": map[string]any{"type": "cookie"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := serve(t, map[string]answer{
				"GET /api/v1/pools/":     {200, poolsPage},
				"PATCH /api/v1/pools/1/": {200, `{"id": 1, "name": "web", "version": 5}`},
			})
			code, stdout, stderr := run(t, f, url, append([]string{"pool", "update", "web"}, tt.args...)...)
			if code != ExitOK || stdout != "Updated pool web (version 5).\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			patch := f.requests[len(f.requests)-1]
			if patch.ifMatch != tt.wantIfMatch || patch.auth != "Bearer secret" {
				t.Errorf("If-Match %q, Authorization %q", patch.ifMatch, patch.auth)
			}
			var body map[string]any
			_ = json.Unmarshal([]byte(patch.body), &body)
			if diff := cmp.Diff(tt.wantBody, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateResolvesNames(t *testing.T) {
	f, url := serve(t, map[string]answer{
		"GET /api/v1/pools/":    {200, poolsPage},
		"POST /api/v1/members/": {201, `{"id": 9, "pool": 2, "name": "s1", "version": 1}`},
	})
	code, stdout, stderr := run(t, f, url, "member", "create", "api/s1", "--set", "address=10.0.0.1", "--set", "port=80")
	if code != ExitOK || stdout != "Created member api/s1 (id 9).\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(f.requests[len(f.requests)-1].body), &body)
	want := map[string]any{"pool": 2.0, "name": "s1", "address": "10.0.0.1", "port": 80.0}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestParseDocuments(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []obj
		err   bool
	}{
		{"object", "name: web\nport: 80\n", []obj{{"name": "web", "port": 80.0}}, false},
		{"json", `{"name": "web", "tags": ["a"]}`, []obj{{"name": "web", "tags": []any{"a"}}}, false},
		{"list", "- name: a\n- name: b\n", []obj{{"name": "a"}, {"name": "b"}}, false},
		{"documents", "name: a\n---\nname: b\n", []obj{{"name": "a"}, {"name": "b"}}, false},
		{"nested", "persistence:\n  type: cookie\n", []obj{{"persistence": map[string]any{"type": "cookie"}}}, false},
		{"scalar", "42\n", nil, true},
		{"empty", "", nil, true},
		{"broken", "name: [\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDocuments([]byte(tt.input))
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoginWritesAPrivateConfig(t *testing.T) {
	f, url := serve(t, map[string]answer{
		"POST /api/v1/auth/token/": {201, `{"id": 7, "name": "laptop", "token": "s3cret", "role": "operator", "expires_at": "2030-01-01T00:00:00Z"}`},
		"GET /api/v1/auth/me/":     {200, `{"id": 2, "username": "ops", "role": "operator"}`},
	})
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	env := Env{Stdin: strings.NewReader("pw\n"), Stdout: &stdout, Stderr: &stderr, Version: "test",
		Getenv: func(name string) string {
			if name == "XDG_CONFIG_HOME" {
				return dir
			}
			return ""
		}}
	args := []string{"login", "--url", url, "-u", "ops", "--password-stdin", "--token-name", "laptop"}
	if code := Run(context.Background(), args, env); code != ExitOK {
		t.Fatalf("login exit %d: %s", code, stderr.String())
	}
	var sent map[string]any
	_ = json.Unmarshal([]byte(f.requests[0].body), &sent)
	if diff := cmp.Diff(map[string]any{"username": "ops", "password": "pw", "name": "laptop"}, sent); diff != "" {
		t.Errorf("sign-in body (-want +got):\n%s", diff)
	}
	if f.requests[1].auth != "Bearer s3cret" {
		t.Errorf("me asked with %q", f.requests[1].auth)
	}
	path := filepath.Join(dir, "fulcrum", "config.yaml")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config %v, mode %v", err, info)
	}
	data, _ := os.ReadFile(path)
	want := "token: s3cret\ntoken_id: 7\nurl: " + url + "\nusername: ops\n"
	if string(data) != want {
		t.Errorf("config:\n%s\nwant:\n%s", data, want)
	}
}

const revisionsPage = `{"count": 1, "next": null, "previous": null, "results": [{"id": 30, "number": 3, "message": "web", "nodes": []}]}`

// TestActionsSpeakTheContract checks that each action beyond plain CRUD sends the
// request the contract describes (method, path, query, If-Match, body) and
// prints the answer for people.
func TestActionsSpeakTheContract(t *testing.T) {
	backup := filepath.Join(t.TempDir(), "backup.json")
	if err := os.WriteFile(backup, []byte(`{"format": "fulcrum-backup", "format_version": 1, "objects": {"pools": []}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		answers    map[string]answer
		want       recorded // the last request; auth is not compared
		wantBody   any      // decoded JSON, nil for no body
		wantStdout string
	}{
		{
			name: "rollback", args: []string{"rollback", "3", "-m", "back"},
			answers: map[string]answer{
				"GET /api/v1/revisions/":              {200, revisionsPage},
				"POST /api/v1/revisions/30/rollback/": {201, `{"id": 31, "number": 4}`},
			},
			want:     recorded{method: "POST", path: "/api/v1/revisions/30/rollback/"},
			wantBody: map[string]any{"message": "back"}, wantStdout: "Rolled back to revision 3 as revision 4.\n",
		},
		{
			name: "apply --force", args: []string{"apply", "-m", "again", "--force"},
			answers:  map[string]answer{"POST /api/v1/revisions/": {201, `{"id": 31, "number": 4, "message": "again", "nodes": []}`}},
			want:     recorded{method: "POST", path: "/api/v1/revisions/"},
			wantBody: map[string]any{"message": "again", "force": true}, wantStdout: "Revision 4 published: \"again\".\n",
		},
		{
			name: "confirm", args: []string{"confirm", "3"},
			answers: map[string]answer{
				"GET /api/v1/revisions/":             {200, revisionsPage},
				"POST /api/v1/revisions/30/confirm/": {200, `{"id": 30, "number": 3}`},
			},
			want: recorded{method: "POST", path: "/api/v1/revisions/30/confirm/"}, wantStdout: "Revision 3 confirmed.\n",
		},
		{
			name: "pending", args: []string{"pending"},
			answers: map[string]answer{"GET /api/v1/revisions/pending/": {200, `{"pending": true, "base_revision": 3,
				"count": 2, "summary": {"added": 1, "changed": 1, "removed": 0}, "objects": [
				{"path": "pools/web", "change": "changed", "fields": [{"field": "members/s1/weight", "old": 1, "new": 2}]},
				{"path": "certificates/site", "change": "added", "fields": []}]}`}},
			want: recorded{method: "GET", path: "/api/v1/revisions/pending/"},
			wantStdout: "Not applied yet (since revision 3; 'fulcrum apply' applies them):\n" +
				"~ pools/web\n    members/s1/weight: 1 -> 2\n+ certificates/site\n2 objects: 1 added, 1 changed, 0 removed.\n",
		},
		{
			// An API from before the summary (a rolling upgrade): the changes, no summary line.
			name: "pending from an older api", args: []string{"pending"},
			answers: map[string]answer{"GET /api/v1/revisions/pending/": {200, `{"pending": true, "base_revision": 3, "objects": [
				{"path": "certificates/site", "change": "added", "fields": []}]}`}},
			want:       recorded{method: "GET", path: "/api/v1/revisions/pending/"},
			wantStdout: "Not applied yet (since revision 3; 'fulcrum apply' applies them):\n+ certificates/site\n",
		},
		{
			name: "audit filters", args: []string{"audit", "--actor", "ops", "--search", "web pool", "--object-type", "pool", "-n", "5"},
			answers:    map[string]answer{"GET /api/v1/audit/": {200, `{"count": 0, "next": null, "results": []}`}},
			want:       recorded{method: "GET", path: "/api/v1/audit/", query: "actor=ops&limit=5&object_type=pool&q=web+pool"},
			wantStdout: "TIME  ACTOR  ACTION  OBJECT  STATUS  SUMMARY\n",
		},
		{
			name: "token revoke", args: []string{"token", "delete", "laptop"},
			answers: map[string]answer{
				"GET /api/v1/tokens/":      {200, `{"count": 1, "next": null, "results": [{"id": 7, "name": "laptop"}]}`},
				"DELETE /api/v1/tokens/7/": {204, ""},
			},
			want: recorded{method: "DELETE", path: "/api/v1/tokens/7/"}, wantStdout: "Deleted token laptop.\n",
		},
		{
			name: "user update", args: []string{"user", "update", "vera", "--set", "role=operator"},
			answers: map[string]answer{
				"GET /api/v1/users/":     {200, `{"count": 1, "next": null, "results": [{"id": 2, "username": "vera", "version": 1}]}`},
				"PATCH /api/v1/users/2/": {200, `{"id": 2, "username": "vera", "role": "operator", "version": 2}`},
			},
			want:     recorded{method: "PATCH", path: "/api/v1/users/2/", ifMatch: `"1"`},
			wantBody: map[string]any{"role": "operator"}, wantStdout: "Updated user vera (version 2).\n",
		},
		{
			name: "ipvs-sync update", args: []string{"ipvs-sync", "update", "--set", "enabled=true"},
			answers: map[string]answer{
				"GET /api/v1/ipvs-sync/":   {200, `{"enabled": false, "version": 2}`},
				"PATCH /api/v1/ipvs-sync/": {200, `{"enabled": true, "version": 3}`},
			},
			want:     recorded{method: "PATCH", path: "/api/v1/ipvs-sync/", ifMatch: `"2"`},
			wantBody: map[string]any{"enabled": true}, wantStdout: "Updated ipvs-sync (version 3).\n",
		},
		{
			name: "backup export", args: []string{"backup", "export"},
			answers:    map[string]answer{"GET /api/v1/backup/": {200, `{"format": "fulcrum-backup", "format_version": 1, "objects": {}}`}},
			want:       recorded{method: "GET", path: "/api/v1/backup/"},
			wantStdout: "{\n  \"format\": \"fulcrum-backup\",\n  \"format_version\": 1,\n  \"objects\": {}\n}\n",
		},
		{
			name: "restore dry run", args: []string{"backup", "restore", backup, "--dry-run"},
			answers: map[string]answer{"POST /api/v1/backup/restore/": {200, `{"applied": false, "node_tokens": {},
				"changes": [{"path": "pools/web", "change": "removed", "fields": []}]}`}},
			want: recorded{method: "POST", path: "/api/v1/backup/restore/"},
			wantBody: map[string]any{"dry_run": true, "document": map[string]any{
				"format": "fulcrum-backup", "format_version": 1.0, "objects": map[string]any{"pools": []any{}}}},
			wantStdout: "Dry run: restoring " + backup + " would change (nothing is changed):\n- pools/web\n",
		},
		{
			name: "restore", args: []string{"backup", "restore", backup},
			answers: map[string]answer{"POST /api/v1/backup/restore/": {200, `{"applied": true, "node_tokens": {"lb2": "t0k"},
				"changes": [{"path": "nodes/lb2", "change": "added", "fields": []}]}`}},
			want: recorded{method: "POST", path: "/api/v1/backup/restore/"},
			wantBody: map[string]any{"dry_run": false, "document": map[string]any{
				"format": "fulcrum-backup", "format_version": 1.0, "objects": map[string]any{"pools": []any{}}}},
			wantStdout: "Restored " + backup + ":\n+ nodes/lb2\n" +
				"Agent token of the new node lb2 (shown only now): t0k\n" +
				"Not applied yet: 'fulcrum pending' shows it, 'fulcrum apply' applies it.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := serve(t, tt.answers)
			code, stdout, stderr := run(t, f, url, tt.args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if diff := cmp.Diff(tt.wantStdout, stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			last := f.requests[len(f.requests)-1]
			var body any
			if last.body != "" {
				if err := json.Unmarshal([]byte(last.body), &body); err != nil {
					t.Fatalf("body %q is not JSON: %v", last.body, err)
				}
			}
			if diff := cmp.Diff(tt.wantBody, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			last.body, last.auth = "", ""
			if diff := cmp.Diff(tt.want, last, cmp.AllowUnexported(recorded{})); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyWithNothingPending checks that an apply the API refuses because nothing is
// pending is no error for a script: the API's message on stderr, nothing on stdout, exit 0.
// Any other conflict stays one.
func TestApplyWithNothingPending(t *testing.T) {
	nothing := answer{409, `{"detail": "nothing to apply: the configuration is the same as revision 3",
		"code": "nothing_to_apply", "base_revision": 3}`}
	wantStderr := "nothing to apply: the configuration is the same as revision 3 " +
		"(nothing published; 'fulcrum apply --force' publishes it again)\n"
	for _, args := range [][]string{{"apply"}, {"apply", "-o", "json", "--wait"}, {"apply", "-q", "--confirm", "1m"}} {
		f, url := serve(t, map[string]answer{"POST /api/v1/revisions/": nothing})
		code, stdout, stderr := run(t, f, url, args...)
		if code != ExitOK || stdout != "" || stderr != wantStderr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0, nothing, %q", args, code, stdout, stderr, wantStderr)
		}
		if len(f.requests) != 1 {
			t.Errorf("%v: %d requests, want the apply alone", args, len(f.requests))
		}
	}
	f, url := serve(t, map[string]answer{"POST /api/v1/revisions/": {409, `{"detail": "Busy.", "code": "other"}`}})
	if code, _, stderr := run(t, f, url, "apply"); code != ExitConflict {
		t.Errorf("another conflict: exit %d, stderr %q; want %d", code, stderr, ExitConflict)
	}
}
