// Package outbox queues what the agent reports to the API (VRRP state
// changes, daemon restarts) and sends it in order, in batches, retrying while
// the API is down.
package outbox

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/clock"
)

// Outbox defaults.
const (
	// DefaultSize is how many events wait for the API at most; the oldest
	// go first when more come.
	DefaultSize = 1000
	// DefaultRetryMin and DefaultRetryMax bound the delay between two
	// attempts while the API does not take the events.
	DefaultRetryMin = time.Second
	DefaultRetryMax = 30 * time.Second
)

// Outbox queues events for the API and sends them in order, in batches,
// retrying with a capped exponential backoff while the API is down, so
// that a short outage loses none. It is safe for concurrent use.
type Outbox[E any] struct {
	// What names the events in the log ("ha events").
	What string
	// Send sends at most client.MaxEventsPerCall events to the API.
	Send func(ctx context.Context, events []E) error
	// Size bounds the queue; zero means DefaultSize.
	Size int
	// RetryMin and RetryMax bound the backoff; zero means the defaults.
	RetryMin, RetryMax time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Sleep waits d or until ctx ends; nil means a real timer. Tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	queue   []queued[E]
	seq     uint64 // of the last event queued
	dropped int    // events dropped since last logged
	wake    chan struct{}
}

// queued is an event and its place in the order of Add.
type queued[E any] struct {
	seq   uint64
	event E
}

// Add queues events, dropping the oldest queued ones beyond Size.
func (o *Outbox[E]) Add(events ...E) {
	if len(events) == 0 {
		return
	}
	o.mu.Lock()
	for _, e := range events {
		o.seq++
		o.queue = append(o.queue, queued[E]{o.seq, e})
	}
	size := o.Size
	if size <= 0 {
		size = DefaultSize
	}
	if over := len(o.queue) - size; over > 0 {
		o.queue = append([]queued[E](nil), o.queue[over:]...)
		o.dropped += over
	}
	o.mu.Unlock()
	select {
	case o.wakeChan() <- struct{}{}:
	default:
	}
}

// Pending returns how many events wait to be sent.
func (o *Outbox[E]) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue)
}

// Run sends queued events as they come until ctx ends.
func (o *Outbox[E]) Run(ctx context.Context) {
	delay := time.Duration(0)
	for {
		if err := o.Flush(ctx); err != nil {
			delay = o.nextDelay(delay)
			o.logger().Warn(o.What+": the api did not take them; retrying", "err", err, "pending", o.Pending(), "retry_in", delay)
			if o.sleep(ctx, delay) != nil {
				return
			}
			continue
		}
		delay = 0
		select {
		case <-ctx.Done():
			return
		case <-o.wakeChan():
		}
	}
}

// Flush sends every queued event, at most client.MaxEventsPerCall per
// call, and returns the first error that left some queued. A batch the API
// refuses as invalid (HTTP 4xx other than 401, 408, 429) is dropped: it
// would never be taken.
func (o *Outbox[E]) Flush(ctx context.Context) error {
	o.noteDropped()
	for {
		batch, last := o.head()
		if len(batch) == 0 {
			return nil
		}
		err := o.Send(ctx, batch)
		if err != nil && !refused(err) {
			return err
		}
		if err != nil {
			o.logger().Error(o.What+": the api refused a batch; dropping it", "err", err, "events", len(batch))
		}
		o.pop(last)
	}
}

// refused tells a request the API will never accept from a temporary
// failure.
func refused(err error) bool {
	var se *client.StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return se.Status >= 400 && se.Status < 500
}

// head returns the oldest events, as many as one call takes, and the
// sequence number of the last of them.
func (o *Outbox[E]) head() ([]E, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(len(o.queue), client.MaxEventsPerCall)
	if n == 0 {
		return nil, 0
	}
	batch := make([]E, n)
	for i, q := range o.queue[:n] {
		batch[i] = q.event
	}
	return batch, o.queue[n-1].seq
}

// pop removes the events sent, up to sequence number last; Add may have
// dropped some of them meanwhile.
func (o *Outbox[E]) pop(last uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := 0
	for i < len(o.queue) && o.queue[i].seq <= last {
		i++
	}
	o.queue = o.queue[i:]
}

// noteDropped logs the events lost to a full queue since it last did.
func (o *Outbox[E]) noteDropped() {
	o.mu.Lock()
	dropped := o.dropped
	o.dropped = 0
	o.mu.Unlock()
	if dropped > 0 {
		o.logger().Warn(o.What+": queue full while the api was down; the oldest were dropped", "dropped", dropped)
	}
}

func (o *Outbox[E]) wakeChan() chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	return o.wake
}

func (o *Outbox[E]) nextDelay(prev time.Duration) time.Duration {
	lo, hi := o.RetryMin, o.RetryMax
	if lo <= 0 {
		lo = DefaultRetryMin
	}
	if hi <= 0 {
		hi = DefaultRetryMax
	}
	return min(max(2*prev, lo), hi)
}

func (o *Outbox[E]) sleep(ctx context.Context, d time.Duration) error {
	if o.Sleep != nil {
		return o.Sleep(ctx, d)
	}
	return clock.Sleep(ctx, d)
}

func (o *Outbox[E]) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}
