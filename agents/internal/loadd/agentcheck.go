package loadd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"fulcrum/agents/internal/dllc"
)

const (
	// maxAgentConns bounds the connections served at once; more are closed
	// at once (HAProxy opens one per server and agent-inter).
	maxAgentConns = 256
	// agentLinger bounds how long a connection is kept after the reply, to
	// read and discard what the client sent (agent-send) so that closing
	// sends a FIN rather than a reset that could destroy the reply.
	agentLinger = 2 * time.Second
)

// AgentReply is the agent-check line for a load: "<percent>%\n", the
// weight only.
func AgentReply(l Load) string {
	return fmt.Sprintf("%d%%\n", dllc.AgentPercent(l.Milli))
}

// AgentCheck serves HAProxy's agent-check protocol: on connect it writes
// AgentReply of the meter's current load and closes. Without a load (none
// yet, or the source failing) it closes without a reply, which HAProxy takes
// as "no change". Clients outside Allow are closed at once.
type AgentCheck struct {
	Meter  *Meter
	Allow  *Allowlist
	Logger *slog.Logger
}

// Serve answers connections on ln until ctx is done, then closes ln and
// waits for the connections being served.
func (a *AgentCheck) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	refusals := newRefusalLog(a.Logger, "agent-check")
	busy := make(chan struct{}, maxAgentConns)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: back off, as net/http does.
			a.Logger.Warn("agent-check accept failed", "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		select {
		case busy <- struct{}{}:
		default:
			conn.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-busy }()
			a.serveConn(conn, refusals)
		}()
	}
}

func (a *AgentCheck) serveConn(conn net.Conn, refusals *refusalLog) {
	defer conn.Close()
	now := time.Now()
	client := remoteAddr(conn.RemoteAddr())
	if !a.Allow.Allows(client) {
		refusals.note(now, client)
		return
	}
	_ = conn.SetDeadline(now.Add(agentLinger))
	if l, err := a.Meter.Current(now); err != nil {
		a.Logger.Debug("agent-check: no reply", "client", client.String(), "why", err)
	} else if _, err := io.WriteString(conn, AgentReply(l)); err != nil {
		a.Logger.Debug("agent-check: reply not sent", "client", client.String(), "err", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(conn, 64<<10))
}
