package loadd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Config is one fulcrum-loadd: a meter and the listeners it answers on.
type Config struct {
	Meter *Meter
	Allow *Allowlist
	// AgentListener takes HAProxy's agent-checks; nil for none.
	AgentListener net.Listener
	// HTTPListener serves GET /v1/load; nil for none.
	HTTPListener net.Listener
	Logger       *slog.Logger
}

// Run samples and serves until ctx is done (nil) or a listener fails (its
// error). It closes the listeners.
func Run(ctx context.Context, c Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	fail := func(err error) {
		errs <- err
		cancel()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Meter.Run(ctx)
	}()
	if c.AgentListener != nil {
		agent := &AgentCheck{Meter: c.Meter, Allow: c.Allow, Logger: c.Logger}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := agent.Serve(ctx, c.AgentListener); err != nil {
				fail(fmt.Errorf("agent-check listener: %w", err))
			}
		}()
	}
	if c.HTTPListener != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveHTTP(ctx, c); err != nil {
				fail(fmt.Errorf("http listener: %w", err))
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// serveHTTP serves until ctx is done, then lets requests in flight finish
// (for up to five seconds).
func serveHTTP(ctx context.Context, c Config) error {
	srv := NewHTTPServer(NewHandler(c.Meter, c.Allow, c.Logger))
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	})
	err := srv.Serve(c.HTTPListener) // closes the listener when it returns
	if stop() {
		return err // failed on its own, not shut down
	}
	<-done
	return nil
}
