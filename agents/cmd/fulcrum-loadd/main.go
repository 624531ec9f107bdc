// Command fulcrum-loadd runs on a real server: it measures the server's load
// and serves it to HAProxy's agent-check, as the weight that makes
// leastconn choose like DLLC, and as JSON (GET /v1/load) for the node agent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"fulcrum/agents/internal/loadd"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

const usageHead = `Usage: fulcrum-loadd [flags]

Measures this server's load over a sliding window and serves it:
  - HAProxy agent-check on --agent-listen: one line "<percent>%\n", then close;
  - GET /v1/load on --http-listen: JSON with load_milli, busy, waiting, ...

Sources (--source): system (this host, /proc/stat), cgroup:PATH (one
control group, v1 or v2), file:PATH (a number, 1.0 = fully busy, read at
every sample), command:CMD (the same number printed by /bin/sh -c CMD).
While the load is unknown (not measured yet, or the source failing for
longer than the window) the agent-check replies nothing, which HAProxy takes
as "no change", and /v1/load answers 503.

Exit status: 0 stopped by SIGINT/SIGTERM, 1 failure, 2 usage error.

Flags:
`

// options are the command-line flags.
type options struct {
	agentListen    string
	httpListen     string
	allow          *loadd.Allowlist
	source         string
	spec           loadd.Spec
	window         time.Duration
	sample         time.Duration
	commandTimeout time.Duration
	logLevel       slog.Level
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process globals, so tests can drive it. It
// returns the exit status: 0 ok, 1 failure, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, code := parseFlags(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	src, err := o.spec.Open(o.commandTimeout)
	if err != nil {
		logger.Error("cannot open the load source", "source", o.source, "err", err)
		return 1
	}
	cfg := loadd.Config{Meter: loadd.NewMeter(src, o.window, o.sample, logger), Allow: o.allow, Logger: logger}
	if cfg.AgentListener, err = listen(o.agentListen); err == nil {
		cfg.HTTPListener, err = listen(o.httpListen)
	}
	if err != nil {
		closeListeners(cfg)
		logger.Error("cannot listen", "err", err)
		return 1
	}
	logger.Info("fulcrum-loadd starting", "version", version, "source", o.source,
		"agent_listen", addrOf(cfg.AgentListener), "http_listen", addrOf(cfg.HTTPListener),
		"allow", o.allow.String(), "window", o.window, "sample", o.sample)
	if err := loadd.Run(ctx, cfg); err != nil {
		logger.Error("stopped", "err", err)
		return 1
	}
	logger.Info("fulcrum-loadd stopping")
	return 0
}

// parseFlags returns the options, and an exit status to return at once or
// -1 to go on.
func parseFlags(args []string, stdout, stderr io.Writer) (options, int) {
	var o options
	var allow, logLevel string
	var showVersion bool
	fs := flag.NewFlagSet("fulcrum-loadd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHead)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.agentListen, "agent-listen", ":3333", "address for HAProxy's agent-check (empty: none)")
	fs.StringVar(&o.httpListen, "http-listen", ":3334", "address for GET /v1/load (empty: none)")
	fs.StringVar(&allow, "allow", "", "clients answered, CIDR[,CIDR...] (empty: any); others get no reply (agent) or 403 (HTTP)")
	fs.StringVar(&o.source, "source", "system", "system, cgroup:PATH, file:PATH or command:CMD")
	fs.DurationVar(&o.window, "window", 2*time.Second, "the load is measured over this sliding window")
	fs.DurationVar(&o.sample, "sample", 250*time.Millisecond, "interval between samples")
	fs.DurationVar(&o.commandTimeout, "command-timeout", time.Second, "time limit of each run of a command source")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return o, 0
	} else if err != nil {
		return o, 2 // the flag package has printed the error and usage
	}
	if showVersion {
		fmt.Fprintf(stdout, "fulcrum-loadd %s\n", version)
		return o, 0
	}
	if err := o.check(fs, allow, logLevel); err != nil {
		fmt.Fprintf(stderr, "fulcrum-loadd: %v\n", err)
		return o, 2
	}
	return o, -1
}

// check validates the flags and fills the parsed options.
func (o *options) check(fs *flag.FlagSet, allow, logLevel string) error {
	var err error
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	case o.agentListen == "" && o.httpListen == "":
		return errors.New("--agent-listen and --http-listen are both empty: nothing to serve")
	case o.sample < 10*time.Millisecond:
		return fmt.Errorf("--sample %s: at least 10ms", o.sample)
	case o.window < 2*o.sample:
		return fmt.Errorf("--window %s: at least twice --sample (%s)", o.window, o.sample)
	case o.commandTimeout <= 0:
		return fmt.Errorf("--command-timeout %s: must be positive", o.commandTimeout)
	}
	if o.spec, err = loadd.ParseSpec(o.source); err != nil {
		return err
	}
	if o.allow, err = loadd.ParseAllowlist(allow); err != nil {
		return err
	}
	if err := o.logLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	return nil
}

// listen opens a TCP listener on addr, or none for an empty addr.
func listen(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	return net.Listen("tcp", addr)
}

func closeListeners(c loadd.Config) {
	for _, ln := range []net.Listener{c.AgentListener, c.HTTPListener} {
		if ln != nil {
			ln.Close()
		}
	}
}

func addrOf(ln net.Listener) string {
	if ln == nil {
		return "off"
	}
	return ln.Addr().String()
}
