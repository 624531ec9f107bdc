// Package clock holds the agents' one context-aware sleep, shared by the
// poll loop's backoff and HAProxy's start and reload polling, and Fake,
// the clock tests of timed loops run on.
package clock

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, in which case it returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
