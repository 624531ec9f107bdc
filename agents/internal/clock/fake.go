package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a clock for tests of timed loops: Sleep moves its time forward
// at once instead of waiting, and records how long it was asked to wait.
// Loops take it as their Now and Sleep functions.
type Fake struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// NewFake returns a fake clock showing start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d, as work taking d would.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// Sleep returns ctx.Err() if ctx has ended; otherwise it moves the fake
// time forward by d and returns nil.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slept = append(f.slept, d)
	f.now = f.now.Add(max(d, 0))
	return nil
}

// Slept returns every duration Sleep was asked for, in order.
func (f *Fake) Slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.slept...)
}
