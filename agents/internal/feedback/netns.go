package feedback

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// inNetNS runs fn on an OS thread of its own that has entered the network
// namespace at path; the thread is thrown away afterwards (never unlocked),
// so no other goroutine ever runs in the wrong namespace. Sockets and files
// fn opens keep addressing that namespace.
func inNetNS(path string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ns, err := os.Open(path)
		if err != nil {
			done <- fmt.Errorf("network namespace: %w", err)
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("enter %s: %w", path, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// NewHTTPClient is the client that reads fulcrum-loadd: connections are
// opened from the network namespace at netns (empty: the agent's own), where
// the balancer reaches the real servers, and never through a proxy from the
// environment.
func NewHTTPClient(netns string, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout}
	transport := &http.Transport{
		Proxy:             nil,
		DialContext:       dialer.DialContext,
		DisableKeepAlives: true, // one request per member per second: nothing to keep
	}
	if netns != "" {
		transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			err := inNetNS(netns, func() (err error) {
				conn, err = dialer.DialContext(ctx, network, addr)
				return err
			})
			return conn, err
		}
	}
	return &http.Client{Transport: transport, Timeout: timeout}
}
