// Command fulcrum-agent is the Fulcrum node agent: it long-polls the API for
// this node's desired revision, validates it with HAProxy and keepalived,
// swaps it in atomically, reloads the daemons whose files changed (HAProxy
// without dropping connections), rolls back to the last good configuration
// on failure, and reports the outcome. Meanwhile it keeps the kernel's IPVS
// services on the schedulers the operator asked for, feeds the members'
// loads to dynamic-least-load pools, keeps keepalived's VRRP track files
// (HAProxy down: give up the VIPs at once) and follows the node's VRRP
// states, and tells the API the node's networks, those loads and states,
// every VRRP state change, and every 10 s the traffic of each service and
// member and each member's health. With --firewall it also keeps the
// appliance firewall's service sets equal to the revision's enabled
// services.
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
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"fulcrum/agents/internal/apply"
	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/client"
	"fulcrum/agents/internal/feedback"
	"fulcrum/agents/internal/firewall"
	"fulcrum/agents/internal/ha"
	"fulcrum/agents/internal/haproxy"
	"fulcrum/agents/internal/ipvs"
	"fulcrum/agents/internal/keepalived"
	"fulcrum/agents/internal/outbox"
	"fulcrum/agents/internal/status"
	"fulcrum/agents/internal/telemetry"
)

// reconcileInterval paces the IPVS scheduler reconcile: IPVS has no change
// notifications, and keepalived puts its own scheduler back on reloads.
const reconcileInterval = time.Second

// superviseInterval paces the look for a daemon that stopped between
// applies (HAProxy, keepalived): one that died is started again within it
// and the start, well under a second.
const superviseInterval = 200 * time.Millisecond

// The DLLC feedback loop: how often members' loads are read, how long one
// read may take, the weight of a new reading, and how old a load may be
// (the ip_vs_dllc module's own max_age_ms default).
const (
	feedbackInterval = time.Second
	feedbackTimeout  = 800 * time.Millisecond
	feedbackAlpha    = 0.5
	feedbackMaxAge   = 3 * time.Second
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// options are the command-line flags.
type options struct {
	api           string
	apiPin        string
	tokenFile     string
	stateDir      string
	haproxyBin    string
	keepalivedBin string
	keepalivedLog string
	nftBin        string
	firewall      bool
	netns         string
	execPrefix    string
	logLevel      string
	wait          time.Duration
	confirmGrace  time.Duration
	telemetry     time.Duration
	once          bool
	// managementState is fulcrum-management's state file: this appliance's role for the
	// cluster's management VIP, sent with the node's status; empty: none.
	managementState string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// run is main without the process globals, so tests can drive it. It
// returns the exit status: 0 ok, 1 failure, 2 usage error.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check-binds" {
		// The bind check's helper, run in the node's namespace (haproxy.Manager.BindHelper).
		return haproxy.BindCheckMain(ctx, args[1:], os.Stdout)
	}
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
	n, err := newNode(opts, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	defer n.close()
	logger.Info("fulcrum-agent starting", "version", version, "api", opts.api, "state_dir", opts.stateDir,
		"keepalived", opts.keepalivedBin != "", "firewall", opts.firewall, "once", opts.once)
	if opts.once {
		return n.once(ctx)
	}
	n.run(ctx)
	logger.Info("fulcrum-agent stopping; haproxy and keepalived keep running")
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fulcrum-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.api, "api", "", "base URL of the Fulcrum API, e.g. https://fulcrum:8443 (required)")
	fs.StringVar(&o.apiPin, "api-pin", "", "a PEM certificate the API's TLS certificate must be, exactly (the cluster's console certificate, pinned when the appliance joined); empty: the system's CAs")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding this node's API token (required)")
	fs.StringVar(&o.stateDir, "state-dir", "/var/lib/fulcrum-agent", "state directory: file sets (bundles/, live and last-good links), run/, state.json")
	fs.StringVar(&o.haproxyBin, "haproxy", "haproxy", "haproxy executable")
	fs.StringVar(&o.keepalivedBin, "keepalived", "keepalived", "keepalived executable; empty: keepalived files are stored, keepalived is not managed")
	fs.StringVar(&o.keepalivedLog, "keepalived-log", "", "file keepalived logs to; empty: syslog")
	fs.StringVar(&o.nftBin, "nft", "nft", "nft executable, for keepalived.d/fulcrum.nft and, with --firewall, firewall.nft")
	fs.BoolVar(&o.firewall, "firewall", false,
		"load each revision's firewall.nft into the sets of the appliance's firewall baseline (table inet fulcrum_firewall, which must be loaded); off: the file is stored only")
	fs.StringVar(&o.netns, "netns", "", "network namespace of IPVS and of the real servers' load agents (NAME for /run/netns/NAME, or a path); empty: the agent's own")
	fs.StringVar(&o.execPrefix, "exec-prefix", "", `words prepended to the haproxy start command and to every keepalived, nft and ip command, e.g. "ip netns exec fl-lb"`)
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "long-poll wait asked of the API (the API caps it at 55s)")
	fs.DurationVar(&o.confirmGrace, "confirm-grace", apply.DefaultConfirmGrace,
		"after applying a revision that awaits confirmation: how long past its deadline to wait for an answer from the API before going back to the previous revision")
	fs.DurationVar(&o.telemetry, "telemetry-interval", telemetry.DefaultInterval,
		"how often to send the services' and members' traffic and health to the API; 0 disables")
	fs.StringVar(&o.managementState, "management-state", "",
		"fulcrum-management's state file (this appliance's part in the cluster's management VIP), sent with the node's status; empty: none")
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
	case o.confirmGrace < 0:
		err := errors.New("--confirm-grace must not be negative")
		fmt.Fprintf(stderr, "fulcrum-agent: %v\n", err)
		return o, err
	case o.telemetry != 0 && (o.telemetry < time.Second || o.telemetry > 300*time.Second):
		err := errors.New("--telemetry-interval must be 0 (off) or from 1s to 300s")
		fmt.Fprintf(stderr, "fulcrum-agent: %v\n", err)
		return o, err
	}
	return o, nil
}

// node is the agent's loops: poll and apply, the IPVS scheduler
// reconcile, VRRP, the status report, the telemetry.
type node struct {
	agent      *apply.Agent
	reconciler *ipvs.Reconciler // nil when keepalived is not managed
	ha         *ha.Watcher      // nil when keepalived is not managed
	haEvents   *outbox.Outbox[client.Event]
	restarts   *outbox.Outbox[client.DaemonEvent]
	kernel     *ipvs.Netlink
	feedback   *feedback.Loop
	module     *feedback.ModuleFile
	reporter   *status.Reporter
	telemetry  *telemetry.Reporter // nil when disabled
	logger     *slog.Logger
}

// newNode wires the API client, the state directory, HAProxy, keepalived,
// IPVS and the status reporter together.
func newNode(o options, logger *slog.Logger) (*node, error) {
	token, err := os.ReadFile(o.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	api, err := client.New(o.api, strings.TrimSpace(string(token)))
	if err != nil {
		return nil, err
	}
	if o.apiPin != "" {
		pinned, err := os.ReadFile(o.apiPin)
		if err != nil {
			return nil, fmt.Errorf("api pin: %w", err)
		}
		if err := api.Pin(pinned); err != nil {
			return nil, fmt.Errorf("api pin %s: %w", o.apiPin, err)
		}
	}
	store := apply.Store{Dir: o.stateDir}
	if err := store.Init(); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	prefix := strings.Fields(o.execPrefix)
	hap := haproxy.New(o.haproxyBin, prefix, store.LiveDir(), store.RunDir())
	hap.Logger = logger
	if self, err := os.Executable(); err == nil {
		hap.BindHelper = []string{self, "check-binds"}
	}
	n := &node{logger: logger}
	n.restarts = &outbox.Outbox[client.DaemonEvent]{What: "daemon events", Send: api.SendDaemonEvents, Logger: logger}
	applier := &apply.Applier{Store: store, HAProxy: hap, Logger: logger}
	if o.keepalivedBin != "" {
		n.kernel = &ipvs.Netlink{NetNS: netnsPath(o.netns)}
		n.reconciler = &ipvs.Reconciler{
			Kernel: n.kernel,
			Wanted: ipvs.FileWanted(filepath.Join(store.LiveDir(), bundle.IPVSFile)),
			Logger: logger,
		}
		ka := keepalived.New(o.keepalivedBin, o.nftBin, prefix, store.LiveDir(), store.RunDir())
		ka.LogFile, ka.Logger, ka.AfterLoad = o.keepalivedLog, logger, n.reconciler.Reconcile
		applier.Keepalived = ka
		n.haEvents = &outbox.Outbox[client.Event]{What: "ha events", Send: api.SendEvents, Logger: logger}
		n.ha = &ha.Watcher{
			ConfFile:   filepath.Join(store.LiveDir(), bundle.HAFile),
			Keepalived: ka, HAProxyRunning: hap.MasterAlive, Host: ha.Commands{ExecPrefix: prefix},
			Events: n.haEvents, Logger: logger,
		}
		ka.BeforeLoad = n.ha.Prepare
		applier.BeforeHeal = func(daemon string) {
			if daemon == bundle.HAProxyPart.Daemon {
				n.ha.SyncHAProxyFile()
			}
		}
	}
	if o.firewall {
		fw := firewall.New(o.nftBin, prefix, store.LiveDir())
		fw.Logger = logger
		applier.Firewall = fw
	}
	n.agent = &apply.Agent{
		Source:    api,
		Reporter:  api,
		Applier:   applier,
		Wait:      o.wait,
		Backoff:   apply.Backoff{Min: time.Second, Max: 30 * time.Second},
		DiskRetry: apply.DefaultDiskRetry,
		Logger:    logger,

		DaemonEvents: n.restarts,
		ConfirmGrace: o.confirmGrace,
	}
	n.module = &feedback.ModuleFile{NetNS: netnsPath(o.netns)}
	n.feedback = &feedback.Loop{
		Module:   n.module,
		HAProxy:  hap,
		Services: ipvs.FileWanted(filepath.Join(store.LiveDir(), bundle.IPVSFile)),
		Servers:  liveServers(filepath.Join(store.LiveDir(), bundle.ServersFile)),
		Poller:   &feedback.Poller{Client: feedback.NewHTTPClient(netnsPath(o.netns), feedbackTimeout), Alpha: feedbackAlpha},
		MaxAge:   feedbackMaxAge,
		Logger:   logger,
	}
	if n.kernel != nil {
		n.feedback.IPVS = n.kernel
	}
	n.reporter = &status.Reporter{
		Sender: api, Networks: status.IPAddr{ExecPrefix: prefix}, IPVS: n.ipvsStatuses, Members: n.feedback.Members,
		VRRP: n.vrrpStatuses, Logger: logger,
	}
	if o.managementState != "" {
		n.reporter.Management = status.ManagementState(o.managementState)
	}
	if o.telemetry > 0 {
		n.telemetry = n.newTelemetry(api, hap, store, o.telemetry)
	}
	return n, nil
}

// newTelemetry reads HAProxy's stats and, when keepalived is managed, the
// kernel's IPVS counters.
func (n *node) newTelemetry(api *client.Client, hap *haproxy.Manager, store apply.Store, interval time.Duration) *telemetry.Reporter {
	sources := []telemetry.Source{telemetry.HAProxy{Stats: hap, Running: hap.MasterAlive}}
	if n.kernel != nil {
		sources = append(sources, telemetry.IPVS{
			Kernel: n.kernel, Services: ipvs.FileWanted(filepath.Join(store.LiveDir(), bundle.IPVSFile)),
		})
	}
	return &telemetry.Reporter{
		Collector: &telemetry.Collector{Sources: sources}, Sender: api, Interval: interval, Logger: n.logger,
	}
}

// liveServers reads the live servers.json; a missing file means none.
func liveServers(path string) func() ([]bundle.Server, error) {
	return func() ([]bundle.Server, error) {
		text, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s, err := bundle.ParseServers(string(text))
		return s.Servers, err
	}
}

// run runs the loops until ctx ends.
func (n *node) run(ctx context.Context) {
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	if n.reconciler != nil {
		wg.Add(1)
		go func() { defer wg.Done(); n.reconciler.Run(ctx, reconcileInterval) }()
	}
	if n.ha != nil {
		wg.Add(2)
		go func() { defer wg.Done(); n.ha.Run(ctx) }()
		go func() { defer wg.Done(); n.haEvents.Run(ctx) }()
	}
	wg.Add(4)
	go func() { defer wg.Done(); n.restarts.Run(ctx) }()
	go func() { defer wg.Done(); n.feedback.Run(ctx, feedbackInterval) }()
	go func() { defer wg.Done(); n.reporter.Run(ctx) }()
	go func() { defer wg.Done(); n.agent.Supervise(ctx, superviseInterval) }()
	if n.telemetry != nil {
		wg.Add(1)
		go func() { defer wg.Done(); n.telemetry.Run(ctx) }()
	}
	_ = n.agent.Run(ctx)
}

// once runs one cycle, one reconcile, one VRRP step, one status report and
// one telemetry sample (gauges and health; whose failures are only
// logged), and returns the exit status.
func (n *node) once(ctx context.Context) int {
	err := n.agent.Once(ctx)
	if n.reconciler != nil {
		n.reconciler.Reconcile(ctx)
	}
	if n.ha != nil {
		n.ha.Step(ctx)
		if ferr := n.haEvents.Flush(ctx); ferr != nil {
			n.logger.Warn("ha events not sent", "err", ferr, "pending", n.haEvents.Pending())
		}
	}
	n.feedback.Step(ctx)
	_ = n.reporter.Step(ctx)
	if n.telemetry != nil {
		n.telemetry.Step(ctx)
	}
	if err != nil {
		n.logger.Error("cycle failed", "err", err)
		return 1
	}
	return 0
}

func (n *node) close() {
	if n.kernel != nil {
		_ = n.kernel.Close()
	}
	_ = n.module.Close()
}

// ipvsStatuses is the reconciler's outcome as the API takes it.
func (n *node) ipvsStatuses() []client.IPVSStatus {
	if n.reconciler == nil {
		return nil
	}
	var out []client.IPVSStatus
	for _, s := range n.reconciler.Statuses() {
		out = append(out, client.IPVSStatus{
			Key: s.Key, Name: s.Name, SchedulerWanted: s.Wanted, SchedulerInForce: s.InForce, Message: s.Message,
		})
	}
	return out
}

// vrrpStatuses is the node's VRRP state in each HA group.
func (n *node) vrrpStatuses() []client.VRRPStatus {
	if n.ha == nil {
		return nil
	}
	return n.ha.Statuses()
}

// netnsPath turns --netns into a path: a bare name lives in /run/netns.
func netnsPath(netns string) string {
	if netns == "" || strings.Contains(netns, "/") {
		return netns
	}
	return filepath.Join("/run/netns", netns)
}
