// Command fulcrum-realserver prepares a Linux host as a real server for
// IPVS direct routing (DR) and IP-in-IP tunnelling (TUN): it puts virtual
// IPs on lo or the fallback tunnel device without letting the host answer
// ARP for them, and undoes exactly that.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"fulcrum/agents/internal/realserver"
)

const usage = `Usage:
  fulcrum-realserver add --mode dr|tun [--state FILE] VIP [VIP...]
  fulcrum-realserver remove [--force] [--state FILE] VIP [VIP...]
  fulcrum-realserver status [-o text|json] [--state FILE]

add puts each VIP on this host for IPVS direct routing (dr: VIP/32 or
VIP/128 on lo) or IP-in-IP tunnelling (tun: VIP on tunl0, IPv6 on ip6tnl0,
loading the tunnel module and setting the device up). For IPv4 VIPs it sets
net.ipv4.conf.{all,lo}.arp_ignore=1 and arp_announce=2, so the host never
answers ARP for them, and for tun net.ipv4.conf.{all,tunl0}.rp_filter=0.
Adding a VIP twice changes nothing.

remove undoes what add did: it deletes only the addresses add added and
restores each sysctl and device to what it was once no VIP needs it. A VIP
add did not add is an error unless --force, which also finishes a removal
that was interrupted.

status shows what the state file records and what the host shows now.

Every change is recorded in the state file (default ` + realserver.DefaultStateFile + `).
Exit status: 0 ok, 1 failure, 2 usage error.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, realserver.Linux{}))
}

// run is main without the process globals, so tests can drive it. It
// returns the exit status: 0 ok, 1 failure, 2 usage error.
func run(args []string, stdout, stderr io.Writer, host realserver.Host) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "add":
		return runAdd(args[1:], stdout, stderr, host)
	case "remove":
		return runRemove(args[1:], stdout, stderr, host)
	case "status":
		return runStatus(args[1:], stdout, stderr, host)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "fulcrum-realserver: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func runAdd(args []string, stdout, stderr io.Writer, host realserver.Host) int {
	fs, state := newFlagSet("add --mode dr|tun [--state FILE] VIP [VIP...]", stderr)
	mode := fs.String("mode", "", "dr (VIP on lo) or tun (VIP on tunl0 / ip6tnl0) (required)")
	vipArgs, code := parse(fs, args)
	if code >= 0 {
		return code
	}
	m, err := realserver.ParseMode(*mode)
	if err != nil {
		return usageError(fs, stderr, err)
	}
	vips, err := realserver.ParseVIPs(vipArgs)
	if err != nil {
		return usageError(fs, stderr, err)
	}
	mgr := &realserver.Manager{Host: host, Store: &realserver.Store{Path: *state}}
	changes, err := mgr.Add(vips, m)
	return report(changes, err, stdout, stderr)
}

func runRemove(args []string, stdout, stderr io.Writer, host realserver.Host) int {
	fs, state := newFlagSet("remove [--force] [--state FILE] VIP [VIP...]", stderr)
	force := fs.Bool("force", false, "ignore VIPs that add did not add, and finish an interrupted removal")
	vipArgs, code := parse(fs, args)
	if code >= 0 {
		return code
	}
	vips, err := realserver.ParseVIPs(vipArgs)
	if err != nil && !(*force && len(vipArgs) == 0) {
		return usageError(fs, stderr, err)
	}
	mgr := &realserver.Manager{Host: host, Store: &realserver.Store{Path: *state}}
	changes, err := mgr.Remove(vips, *force)
	return report(changes, err, stdout, stderr)
}

func runStatus(args []string, stdout, stderr io.Writer, host realserver.Host) int {
	fs, state := newFlagSet("status [-o text|json] [--state FILE]", stderr)
	format := fs.String("o", "text", "output format: text or json")
	rest, code := parse(fs, args)
	switch {
	case code >= 0:
		return code
	case len(rest) > 0:
		return usageError(fs, stderr, fmt.Errorf("unexpected arguments: %v", rest))
	case *format != "text" && *format != "json":
		return usageError(fs, stderr, fmt.Errorf("-o %q: want text or json", *format))
	}
	mgr := &realserver.Manager{Host: host, Store: &realserver.Store{Path: *state}}
	st, err := mgr.Status()
	if err == nil && *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(st)
	} else if err == nil {
		err = st.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fulcrum-realserver: %v\n", err)
		return 1
	}
	return 0
}

// newFlagSet makes a subcommand's flag set with the --state flag every
// subcommand has.
func newFlagSet(synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("fulcrum-realserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: fulcrum-realserver %s\n", synopsis)
		fs.PrintDefaults()
	}
	state := fs.String("state", realserver.DefaultStateFile, "state file: what add changed, for remove to undo")
	return fs, state
}

// parse parses flags anywhere among the arguments (the flag package stops at
// the first argument that is not a flag) and returns the others. code is the
// exit status to return at once, or -1 to go on.
func parse(fs *flag.FlagSet, args []string) (rest []string, code int) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		if err != nil {
			return nil, 2 // the flag package has printed the error and usage
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, -1
		}
		rest, args = append(rest, args[0]), args[1:]
	}
}

func usageError(fs *flag.FlagSet, stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "fulcrum-realserver: %v\n", err)
	fs.Usage()
	return 2
}

// report prints the changes made, one per line, and the error if any, and
// returns the exit status.
func report(changes []string, err error, stdout, stderr io.Writer) int {
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fulcrum-realserver: %v\n", err)
		return 1
	}
	if len(changes) == 0 {
		fmt.Fprintln(stdout, "nothing to change")
	}
	return 0
}
