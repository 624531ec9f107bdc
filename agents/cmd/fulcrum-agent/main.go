// Command fulcrum-agent is the Fulcrum node agent: it long-polls the API for
// this node's desired revision, validates it with HAProxy, swaps it in
// atomically, reloads HAProxy without dropping connections, rolls back to
// the last good configuration on failure, and reports the outcome.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/haproxy"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// options are the command-line flags.
type options struct {
	api        string
	tokenFile  string
	stateDir   string
	haproxyBin string
	execPrefix string
	logLevel   string
	wait       time.Duration
	once       bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// run is main without the process globals, so tests can drive it. It
// returns the exit status: 0 ok, 1 failure, 2 usage error.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		fmt.Fprintf(stderr, "fulcrum-agent: --log-level: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	agent, err := newAgent(opts, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	logger.Info("fulcrum-agent starting", "version", version, "api", opts.api, "state_dir", opts.stateDir, "once", opts.once)
	if opts.once {
		if err := agent.Once(ctx); err != nil {
			logger.Error("cycle failed", "err", err)
			return 1
		}
		return 0
	}
	_ = agent.Run(ctx)
	logger.Info("fulcrum-agent stopping; haproxy keeps running")
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fulcrum-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.api, "api", "", "base URL of the Fulcrum API, e.g. https://fulcrum:8443 (required)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding this node's API token (required)")
	fs.StringVar(&o.stateDir, "state-dir", "/var/lib/fulcrum-agent", "state directory: file sets (bundles/, live and last-good links), run/, state.json")
	fs.StringVar(&o.haproxyBin, "haproxy", "haproxy", "haproxy executable")
	fs.StringVar(&o.execPrefix, "exec-prefix", "", `words prepended to the haproxy start command, e.g. "ip netns exec fl-lb"`)
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "long-poll wait asked of the API (the API caps it at 55s)")
	fs.BoolVar(&o.once, "once", false, "run one poll/apply cycle, then exit (non-zero if it failed)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var missing []string
	if o.api == "" {
		missing = append(missing, "--api")
	}
	if o.tokenFile == "" {
		missing = append(missing, "--token-file")
	}
	switch {
	case len(missing) > 0:
		err := fmt.Errorf("missing required flag(s): %s", strings.Join(missing, ", "))
		fmt.Fprintf(stderr, "fulcrum-agent: %v\n", err)
		return o, err
	case fs.NArg() > 0:
		err := fmt.Errorf("unexpected arguments: %v", fs.Args())
		fmt.Fprintf(stderr, "fulcrum-agent: %v\n", err)
		return o, err
	case o.wait < time.Second:
		err := errors.New("--wait must be at least 1s")
		fmt.Fprintf(stderr, "fulcrum-agent: %v\n", err)
		return o, err
	}
	return o, nil
}

// newAgent wires the API client, the state directory and HAProxy together.
func newAgent(o options, logger *slog.Logger) (*apply.Agent, error) {
	token, err := os.ReadFile(o.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	api, err := client.New(o.api, strings.TrimSpace(string(token)))
	if err != nil {
		return nil, err
	}
	store := apply.Store{Dir: o.stateDir}
	if err := store.Init(); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	hap := haproxy.New(o.haproxyBin, strings.Fields(o.execPrefix), store.LiveDir(), store.RunDir())
	hap.Logger = logger
	return &apply.Agent{
		Source:   api,
		Reporter: api,
		Applier:  &apply.Applier{Store: store, Daemon: hap, Logger: logger},
		Wait:     o.wait,
		Backoff:  apply.Backoff{Min: time.Second, Max: 30 * time.Second},
		Logger:   logger,
	}, nil
}
