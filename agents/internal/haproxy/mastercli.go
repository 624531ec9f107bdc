package haproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// cliTimeout bounds a master CLI exchange that is not a reload.
const cliTimeout = 5 * time.Second

// MasterCLI talks to the HAProxy master process over the unix socket given to
// "haproxy -S". Every exchange is one command on a fresh connection, like
// "echo cmd | socat - UNIX-CONNECT:sock".
type MasterCLI struct {
	// Socket is the path of the master CLI socket.
	Socket string
}

// ShowProc returns the master's process table.
func (c MasterCLI) ShowProc(ctx context.Context) (ProcTable, error) {
	out, err := c.exchange(ctx, "show proc", cliTimeout)
	if err != nil {
		return ProcTable{}, err
	}
	return ParseShowProc(out)
}

// Reload asks the master to reload and returns what it printed. HAProxy 2.6
// prints nothing and closes the connection at once; 3.0 waits for the new
// worker and prints "Success=1" or "Success=0", then "--" and the startup
// logs. Either way the caller must confirm the outcome with ShowProc.
func (c MasterCLI) Reload(ctx context.Context, timeout time.Duration) (string, error) {
	out, err := c.exchange(ctx, "reload", timeout)
	// The master closes (or re-executes over) the connection; a reset after
	// the command went out is the normal end of a 2.6 reload.
	var opErr *net.OpError
	if err != nil && errors.As(err, &opErr) && opErr.Op == "read" {
		return out, nil
	}
	return out, err
}

// currentWorker is the master CLI prefix that forwards a command to the
// current worker: "@<n>" addresses a current process by its relative number,
// and the single current worker of HAProxy 2.5+ is 1 (old workers are only
// reachable as "@!<pid>"). The prefix covers one command up to ";" or the
// end of the line, so each exchange carries exactly one command.
const currentWorker = "@1 "

// Worker sends one runtime API command to the current worker and returns
// its answer. HAProxy answers most "set" commands with an empty line when
// they succeed, and with a message when they do not.
func (c MasterCLI) Worker(ctx context.Context, cmd string) (string, error) {
	return c.exchange(ctx, currentWorker+cmd, cliTimeout)
}

func (c MasterCLI) exchange(ctx context.Context, cmd string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return "", fmt.Errorf("master cli %q: %w", cmd, err)
	}
	// Half-close: the master answers, then waits for more commands until
	// it sees the end of our input.
	if uc, ok := conn.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	b, err := io.ReadAll(conn)
	return string(b), err
}
