// Package cli is the `fulcrum` command: the Fulcrum API for people at a
// terminal (aligned tables, objects addressed by name, completion) and for
// scripts (-o json|yaml, documented exit codes). It speaks only REST, through
// the generated client in internal/apiclient.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// Exit codes: documented in `fulcrum --help` and agents/README.md.
const (
	ExitOK          = 0 // success
	ExitError       = 1 // any other error
	ExitUsage       = 2 // bad command line
	ExitNotFound    = 3 // no such object (404, or no object of that name)
	ExitConflict    = 4 // changed by someone else since read, or still in use (409)
	ExitInvalid     = 5 // the API refused the input (400, 422)
	ExitAuth        = 6 // not signed in, or not allowed (401, 403)
	ExitServer      = 7 // the API failed (5xx)
	ExitUnreachable = 8 // the API could not be reached
)

const exitCodesHelp = `Exit codes:
  0  ok (also apply with nothing to apply: nothing published)
  1  other error
  2  usage (bad command, flag or argument)
  3  not found
  4  conflict: changed by someone else since read, or still in use (409)
  5  refused or invalid input (400, 422)
  6  not signed in, or not allowed (401, 403)
  7  server error (5xx)
  8  cannot reach the API`

// Env is what the command reads and writes of its process, so tests can drive it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (FULCRUM_URL, FULCRUM_TOKEN, XDG_CONFIG_HOME, HOME, EDITOR).
	Getenv func(string) string
	// ReadPassword reads a password without echo; nil when stdin is not a terminal.
	ReadPassword func() ([]byte, error)
	// Version is the build's version.
	Version string
	// Interrupts delivers Ctrl-C (SIGINT): it cancels the command running. Nil: none.
	Interrupts <-chan os.Signal
	// Terminal is the terminal the shell edits lines on; nil when stdin is not one.
	Terminal *Terminal
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// notFoundError is an object that does not exist (exit 3).
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// authError is a missing sign-in (exit 6).
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

// ExitCode maps an error to the documented exit code.
func ExitCode(err error) int {
	var usage *usageError
	var notFound *notFoundError
	var auth *authError
	var api *apiclient.APIError
	var transport *apiclient.TransportError
	var status exitStatus
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &notFound):
		return ExitNotFound
	case errors.As(err, &auth):
		return ExitAuth
	case errors.As(err, &transport):
		return ExitUnreachable
	case errors.As(err, &api):
		return statusExitCode(api.Status)
	}
	return ExitError
}

func statusExitCode(status int) int {
	switch {
	case status == http.StatusNotFound:
		return ExitNotFound
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		return ExitConflict
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return ExitInvalid
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ExitAuth
	case status >= 500:
		return ExitServer
	}
	return ExitError
}

// Run runs the command line args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	return execute(ctx, args, env, false)
}

// execute runs one command line, restricted as in the shell or not; Ctrl-C cancels it.
func execute(ctx context.Context, args []string, env Env, restricted bool) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &app{env: env, restricted: restricted, interrupts: watchInterrupts(env.Interrupts, cancel)}
	defer a.interrupts.stop()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	var status exitStatus
	if err == nil || errors.As(err, &status) {
		return ExitCode(err) // a shell's last status, already reported
	}
	if isCobraUsage(err) {
		err = &usageError{err.Error()}
	}
	a.printError(err)
	return ExitCode(err)
}

// isCobraUsage tells cobra's own command-line errors, which carry no type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand", "invalid argument", "flag needs", "required flag", "accepts ", "requires ", "invalid output"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func (a *app) printError(err error) {
	var api *apiclient.APIError
	if errors.As(err, &api) {
		fmt.Fprintf(a.env.Stderr, "Error: %s\n", api.Summary())
		for _, p := range api.Problems {
			fmt.Fprintf(a.env.Stderr, "  %s\n", p)
		}
		if api.Status == http.StatusConflict && api.Version != nil {
			fmt.Fprintf(a.env.Stderr, "  (current version: %d; read the object again and repeat your change)\n", *api.Version)
		}
		return
	}
	fmt.Fprintf(a.env.Stderr, "Error: %s\n", err)
	var usage *usageError
	switch {
	case errors.As(err, &usage) && a.restricted:
		fmt.Fprintln(a.env.Stderr, "Type 'help' for the commands.")
	case errors.As(err, &usage):
		fmt.Fprintln(a.env.Stderr, "Run 'fulcrum --help' for usage.")
	}
}

// errorSummary is an error in one line.
func errorSummary(err error) string {
	var api *apiclient.APIError
	if errors.As(err, &api) {
		return api.Summary()
	}
	return err.Error()
}

// globalFlags are the flags every command takes.
type globalFlags struct {
	url      string
	token    string
	output   string
	quiet    bool
	timeout  time.Duration
	insecure bool
	config   string
}

// app is one run of the command: flags, configuration, API client.
type app struct {
	env   Env
	flags globalFlags
	api   *apiclient.Client
	names *names
	// restricted is the shell's mode: no editor, no local file but the configuration.
	restricted bool
	// interrupts cancels this run at Ctrl-C.
	interrupts *interruptWatch
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "fulcrum",
		Short: "Manage a Fulcrum load-balancer appliance",
		Long: `fulcrum manages a Fulcrum appliance through its REST API: virtual services,
rules, pools, members, health checks, certificates, nodes and HA groups; apply,
diff, confirm and roll back revisions; the status of nodes, VIPs and health;
the audit log.

Objects are addressed by name (members as POOL/MEMBER, rules as SERVICE/RULE,
a health check by its pool); ids work too. Tables are for people; -o json or
-o yaml print the API's own objects for scripts.

Sign in with 'fulcrum login --url URL'. The URL and token are kept in
$XDG_CONFIG_HOME/fulcrum/config.yaml (mode 0600); --url, --token,
FULCRUM_URL and FULCRUM_TOKEN override them.

` + exitCodesHelp,
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           a.env.Version,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.checkFlags() },
	}
	root.SetVersionTemplate("fulcrum {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	f := root.PersistentFlags()
	f.StringVar(&a.flags.url, "url", "", "API URL, e.g. https://fulcrum.example:8443 (env FULCRUM_URL)")
	f.StringVar(&a.flags.token, "token", "", "API token (env FULCRUM_TOKEN)")
	f.StringVarP(&a.flags.output, "output", "o", "table", "output format: table, json or yaml")
	f.BoolVarP(&a.flags.quiet, "quiet", "q", false, "print only names (lists) or nothing (changes)")
	f.DurationVar(&a.flags.timeout, "timeout", 60*time.Second, "time limit of each API request")
	f.BoolVar(&a.flags.insecure, "insecure", false, "do not verify the API's TLS certificate")
	f.StringVar(&a.flags.config, "config", "", "configuration file (default $XDG_CONFIG_HOME/fulcrum/config.yaml)")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))

	root.AddGroup(&cobra.Group{ID: "objects", Title: "Objects:"},
		&cobra.Group{ID: "revisions", Title: "Revisions:"},
		&cobra.Group{ID: "status", Title: "Status and audit:"},
		&cobra.Group{ID: "session", Title: "Session:"})
	for _, k := range kinds {
		cmd := a.kindCommand(k)
		cmd.GroupID = "objects"
		root.AddCommand(cmd)
	}
	for _, cmd := range a.revisionCommands() {
		cmd.GroupID = "revisions"
		root.AddCommand(cmd)
	}
	for _, cmd := range []*cobra.Command{a.statusCommand(), a.auditCommand(), a.backupCommand()} {
		cmd.GroupID = "status"
		root.AddCommand(cmd)
	}
	for _, cmd := range append(a.sessionCommands(), a.shellCommand()) {
		cmd.GroupID = "session"
		root.AddCommand(cmd)
	}
	root.AddCommand(a.versionCommand())
	root.SetHelpCommandGroupID("session")
	root.SetCompletionCommandGroupID("session")
	if a.restricted {
		a.restrict(root)
	}
	return root
}

func (a *app) checkFlags() error {
	switch a.flags.output {
	case "table", "json", "yaml":
		return nil
	}
	return usagef("invalid output format %q: use table, json or yaml", a.flags.output)
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this command",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.env.Stdout, "fulcrum %s\n", a.env.Version)
			return nil
		},
	}
}

// noArgs, exactArgs and rangeArgs are cobra's argument checks as usage errors.
func noArgs(cmd *cobra.Command, args []string) error { return rangeArgs(0, 0)(cmd, args) }

func exactArgs(n int) cobra.PositionalArgs { return rangeArgs(n, n) }

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			want := fmt.Sprintf("%d", lo)
			switch {
			case hi < 0:
				want = fmt.Sprintf("at least %d", lo)
			case hi != lo:
				want = fmt.Sprintf("%d to %d", lo, hi)
			}
			return usagef("%s takes %s argument(s), got %d (usage: %s)", cmd.CommandPath(), want, len(args), cmd.UseLine())
		}
		return nil
	}
}

// client is the API client for the URL and token in force; an error when
// there is no URL or token.
func (a *app) client() (*apiclient.Client, error) {
	if a.api != nil {
		return a.api, nil
	}
	cfg, _, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	target, token, scheme := a.settings(cfg)
	if target == "" {
		return nil, &authError{"no API URL: sign in with 'fulcrum login --url URL' or set FULCRUM_URL"}
	}
	if token == "" {
		return nil, &authError{"not signed in: run 'fulcrum login' or set FULCRUM_TOKEN"}
	}
	api, err := a.newClient(target, token, scheme, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	a.api = api
	return api, nil
}

func (a *app) newClient(target, token, scheme string, insecure bool) (*apiclient.Client, error) {
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		return nil, usagef("API URL %q must start with http:// or https://", target)
	}
	return apiclient.New(target, apiclient.Options{
		Scheme:    scheme,
		Token:     token,
		UserAgent: "fulcrum-cli/" + a.env.Version,
		Timeout:   a.flags.timeout,
		Insecure:  insecure || a.flags.insecure,
	})
}
