package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"fulcrum/agents/internal/client"
)

// fakeAPI takes events unless down; it records every call.
type fakeAPI struct {
	mu    sync.Mutex
	fail  error // returned while set
	calls [][]client.Event
	taken []client.Event
}

func (f *fakeAPI) send(_ context.Context, events []client.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, events)
	if len(events) > client.MaxEventsPerCall {
		return fmt.Errorf("%d events in one call", len(events))
	}
	if f.fail != nil {
		return f.fail
	}
	f.taken = append(f.taken, events...)
	return nil
}

func (f *fakeAPI) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeAPI) got() []client.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]client.Event(nil), f.taken...)
}

// numbered returns events whose priorities count from first.
func numbered(first, n int) []client.Event {
	out := make([]client.Event, n)
	for i := range out {
		out[i] = client.Event{Group: "web", OldState: "backup", NewState: "master", Priority: first + i}
	}
	return out
}

func TestOutboxFlush(t *testing.T) {
	api := &fakeAPI{}
	o := &Outbox[client.Event]{Send: api.send, Logger: slog.New(slog.DiscardHandler)}
	o.Add(numbered(0, 250)...)
	if err := o.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, c := range api.calls {
		sizes = append(sizes, len(c))
	}
	if !cmp.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("batch sizes %v, want [100 100 50]", sizes)
	}
	if diff := cmp.Diff(numbered(0, 250), api.got()); diff != "" {
		t.Errorf("events taken mismatch (-want +got):\n%s", diff)
	}
	if o.Pending() != 0 {
		t.Errorf("%d pending after a flush", o.Pending())
	}
}

// TestOutboxKeepsEventsWhileAPIDown: events wait, in order, while the API
// is down; the queue keeps the newest Size; a refused batch is dropped.
func TestOutboxKeepsEventsWhileAPIDown(t *testing.T) {
	api := &fakeAPI{fail: errors.New("connection refused")}
	o := &Outbox[client.Event]{Send: api.send, Size: 300, Logger: slog.New(slog.DiscardHandler)}
	o.Add(numbered(0, 200)...)
	if err := o.Flush(context.Background()); err == nil {
		t.Fatal("Flush with the API down: nil error")
	}
	o.Add(numbered(200, 200)...) // 400 > Size: the 100 oldest go
	if o.Pending() != 300 {
		t.Fatalf("pending %d, want 300", o.Pending())
	}
	api.setFail(&client.StatusError{Op: "events", Status: http.StatusServiceUnavailable})
	if err := o.Flush(context.Background()); err == nil {
		t.Fatal("Flush with the API answering 503: nil error")
	}
	api.setFail(nil)
	if err := o.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(numbered(100, 300), api.got()); diff != "" {
		t.Errorf("events taken mismatch (-want +got):\n%s", diff)
	}

	api = &fakeAPI{fail: &client.StatusError{Op: "events", Status: http.StatusBadRequest, Body: "bad state"}}
	o = &Outbox[client.Event]{Send: api.send, Logger: slog.New(slog.DiscardHandler)}
	o.Add(numbered(0, 3)...)
	if err := o.Flush(context.Background()); err != nil || o.Pending() != 0 {
		t.Errorf("a refused batch: %v, %d pending; want it dropped", err, o.Pending())
	}
}

// TestOutboxRun retries with a doubling, capped delay until the API takes
// the events, then waits for more.
func TestOutboxRun(t *testing.T) {
	api := &fakeAPI{fail: errors.New("connection refused")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var sleeps []time.Duration
	o := &Outbox[client.Event]{
		Send: api.send, RetryMin: time.Second, RetryMax: 4 * time.Second, Logger: slog.New(slog.DiscardHandler),
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			sleeps = append(sleeps, d)
			if len(sleeps) == 5 {
				api.setFail(nil)
			}
			mu.Unlock()
			return ctx.Err()
		},
	}
	o.Add(numbered(0, 2)...)
	done := make(chan struct{})
	go func() { defer close(done); o.Run(ctx) }()
	waitFor(t, "the first events taken", func() bool { return len(api.got()) == 2 })
	o.Add(numbered(2, 1)...)
	waitFor(t, "an event added later taken", func() bool { return len(api.got()) == 3 })
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
	if !cmp.Equal(sleeps, want) {
		t.Errorf("retry delays %v, want %v", sleeps, want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5s", what)
}
