package cli

// The restricted shell: `fulcrum shell`, and the appliance admin's login shell
// /usr/bin/fulcrum-shell (a link to fulcrum, told apart by its name). It runs
// fulcrum commands in-process and nothing else: no system command, no pipe,
// no redirection, no editor, no local file but the configuration file.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// shellLong is the restricted shell's `help`.
const shellLong = `The Fulcrum restricted shell runs fulcrum commands, typed without 'fulcrum'
('vs list', 'pool show web', 'apply'). Words are split as a shell splits them,
with quotes and backslashes, and nothing more: no pipes, redirections, command
lists, variables or wildcards. 'exit', 'quit' or Ctrl-D leave; Ctrl-C cancels
the line being typed or the command running; Tab completes command names.

Not available here: 'edit' (it starts an editor), --config, and local files:
'-f FILE', 'backup export -f FILE' and 'backup restore FILE' take only '-',
standard input or output (ssh admin@lb pool create -f - < pool.yaml).

` + exitCodesHelp

// errInterrupted is a line given up with Ctrl-C.
var errInterrupted = errors.New("interrupted")

// exitStatus is a finished command's exit code, already reported.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// RunShell runs the login shell: no argument (interactive) or -c LINE (one
// command line, as sshd runs `ssh admin@lb vs list`). It returns the exit code.
func RunShell(ctx context.Context, args []string, env Env) int {
	sh := newShell(env)
	switch {
	case len(args) == 0:
		return sh.interactive(ctx)
	case len(args) == 2 && args[0] == "-c":
		return sh.runLine(ctx, args[1])
	}
	fmt.Fprintln(env.Stderr, "Error: usage: fulcrum-shell [-c COMMAND]")
	return ExitUsage
}

func (a *app) shellCommand() *cobra.Command {
	var line string
	cmd := &cobra.Command{
		Use:   "shell [-c COMMAND]",
		Short: "Run fulcrum commands in a restricted shell (the appliance admin's login shell)",
		Long: "Read command lines and run each as fulcrum would, without 'fulcrum' in front; or run\n" +
			"one line with -c and exit with its status. It starts no other program: see 'help'\n" +
			"inside it for what it refuses.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.restricted {
				return refusedf("you are in the shell already")
			}
			var global []string
			cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
				if f.Changed {
					global = append(global, "--"+f.Name)
				}
			})
			if len(global) > 0 {
				return usagef("the shell takes no %s: give it to each command inside the shell", strings.Join(global, ", "))
			}
			a.interrupts.stop() // the shell cancels each command on its own
			sh := newShell(a.env)
			code := 0
			if cmd.Flags().Changed("command") {
				code = sh.runLine(cmd.Context(), line)
			} else {
				code = sh.interactive(cmd.Context())
			}
			if code != ExitOK {
				return exitStatus(code)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&line, "command", "c", "", "run this one command line and exit with its status")
	return cmd
}

// shell reads command lines and runs them.
type shell struct {
	env Env
	// stdin is what commands read: the terminal, or the rest of the piped input.
	stdin io.Reader
	// plain reads lines when stdin is not a terminal.
	plain *bufio.Reader
	// last is the exit code of the last command run.
	last int
}

func newShell(env Env) *shell {
	s := &shell{env: env, stdin: env.Stdin}
	if env.Terminal == nil {
		// One buffer for the shell and its commands, so that 'login --password-stdin'
		// reads the next line, not what the shell had read ahead.
		s.plain = bufio.NewReader(env.Stdin)
		s.stdin = s.plain
	}
	return s
}

// commandEnv is what commands run in the shell see: the configuration is always
// $HOME/.config/fulcrum/config.yaml, and no editor is named.
func (s *shell) commandEnv() Env {
	env := s.env
	env.Stdin = s.stdin
	getenv := s.env.Getenv
	env.Getenv = func(name string) string {
		switch name {
		case "XDG_CONFIG_HOME", "VISUAL", "EDITOR":
			return ""
		}
		return getenv(name)
	}
	return env
}

// interactive reads and runs lines until exit, quit or the end of the input; the
// exit code is the last command's (1 when ctx ends it: SIGTERM).
func (s *shell) interactive(ctx context.Context) int {
	var lines func(context.Context) (string, error)
	if s.env.Terminal != nil {
		s.banner(ctx)
		editor := newLineEditor(s.env.Terminal, shellPrompt(), s.completer())
		lines = editor.readLine
	} else {
		lines = s.readPlainLine
	}
	for {
		line, err := lines(ctx)
		switch {
		case errors.Is(err, errInterrupted):
			continue
		case errors.Is(err, io.EOF):
			return s.last
		case ctx.Err() != nil:
			return ExitError
		case err != nil:
			fmt.Fprintf(s.env.Stderr, "Error: %v\n", err)
			return ExitError
		}
		if leave(line) {
			return s.last
		}
		if strings.TrimSpace(line) != "" {
			s.last = s.runLine(ctx, line)
		}
	}
}

// readPlainLine reads one line from a non-terminal (the last may lack its newline).
func (s *shell) readPlainLine(ctx context.Context) (string, error) {
	return readOrCancel(ctx, func() (string, error) {
		line, err := s.plain.ReadString('\n')
		if errors.Is(err, io.EOF) && line != "" {
			err = nil
		}
		return strings.TrimRight(line, "\r\n"), err
	})
}

// readOrCancel returns what read reads, or ctx's error when ctx ends first; the
// read is then left to finish on its own, as the shell is ending.
func readOrCancel(ctx context.Context, read func() (string, error)) (string, error) {
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := read()
		got <- result{line, err}
	}()
	select {
	case r := <-got:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// leave tells the words that end the shell.
func leave(line string) bool {
	switch strings.TrimSpace(line) {
	case "exit", "quit":
		return true
	}
	return false
}

// runLine runs one command line as fulcrum would; its exit code.
func (s *shell) runLine(ctx context.Context, line string) int {
	if leave(line) {
		return ExitOK
	}
	words, err := splitLine(line)
	if err == nil {
		err = s.checkCommand(words)
	}
	if err != nil {
		fmt.Fprintf(s.env.Stderr, "Error: %v\nType 'help' for the commands.\n", err)
		return ExitUsage
	}
	if len(words) == 0 {
		return ExitOK
	}
	drainInterrupts(s.env.Interrupts) // a Ctrl-C typed before the command is not for it
	return execute(ctx, words, s.commandEnv(), true)
}

// splitLine splits a command line into words as a POSIX shell does, with quotes
// and backslashes but no expansion; a leading "fulcrum" is dropped. The shell's
// operators are refused rather than taken as words.
func splitLine(line string) ([]string, error) {
	parser := shellwords.NewParser()
	parser.ParseEnv, parser.ParseBacktick, parser.ParseComment = false, false, true
	words, err := parser.Parse(line)
	if err != nil {
		return nil, errors.New("cannot split the line: a quote is not closed, or '(' or ')' is not quoted")
	}
	if parser.Position >= 0 {
		operator := string([]rune(line)[parser.Position])
		return nil, refusedf("%q: no pipes, redirections or command lists (quote it when it belongs in a value)", operator)
	}
	if len(words) > 0 && words[0] == "fulcrum" {
		words = words[1:]
	}
	return words, nil
}

// checkCommand refuses a first word that is no fulcrum command (scp, sftp-server,
// bash...) with a message saying what the shell is.
func (s *shell) checkCommand(words []string) error {
	if len(words) == 0 || strings.HasPrefix(words[0], "-") {
		return nil
	}
	root := (&app{env: s.env, restricted: true}).rootCommand()
	root.InitDefaultHelpCmd()
	for _, cmd := range root.Commands() {
		if cmd.Name() == words[0] || cmd.HasAlias(words[0]) {
			return nil
		}
	}
	return refusedf("%q is not a fulcrum command: this shell runs only fulcrum commands (no system command, file copy or shell)", words[0])
}

// refusedf is what the restricted shell does not do (exit 2).
func refusedf(format string, args ...any) error {
	return &usageError{"restricted shell: " + fmt.Sprintf(format, args...)}
}

// restrict makes the command tree the restricted shell's: no editor, no local
// file but standard input and output (agents/README.md lists what is refused).
func (a *app) restrict(root *cobra.Command) {
	root.Long = shellLong
	root.CompletionOptions.DisableDefaultCmd = true
	_ = root.PersistentFlags().MarkHidden("config")
	walkCommands(root, func(cmd *cobra.Command) {
		switch {
		case cmd.Name() == "edit":
			cmd.Hidden = true
			cmd.RunE = func(*cobra.Command, []string) error {
				return refusedf("edit starts an editor: use 'update NAME --set field=value', or 'update NAME -f -' with the YAML on standard input")
			}
		case cmd.Name() == "shell":
			cmd.Hidden = true
		case cmd.RunE != nil:
			cmd.RunE = onlyStandardStreams(cmd.RunE)
		}
	})
}

// onlyStandardStreams refuses a file flag or a FILE argument other than "-".
func onlyStandardStreams(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if f := cmd.Flags().Lookup("file"); f != nil && f.Value.Type() == "string" {
			path := f.Value.String()
			switch {
			case path == "" || path == "-":
			case cmd.Name() == "export":
				return refusedf("-f %s: no local file; the backup goes to standard output without -f", path)
			default:
				return refusedf("-f %s: no local file; give '-f -' and the data on standard input", path)
			}
		}
		if cmd.CommandPath() == "fulcrum backup restore" && len(args) == 1 && args[0] != "-" {
			return refusedf("restore %s: no local file; give '-' and the backup on standard input", args[0])
		}
		return run(cmd, args)
	}
}

func walkCommands(cmd *cobra.Command, visit func(*cobra.Command)) {
	visit(cmd)
	for _, child := range cmd.Commands() {
		walkCommands(child, visit)
	}
}

// banner says what the shell is, the API it talks to and who is signed in.
func (s *shell) banner(ctx context.Context) {
	out := s.env.Stdout
	fmt.Fprintf(out, "Fulcrum %s restricted shell on %s.\n", s.env.Version, firstNonEmpty(hostLabel(), "this host"))
	fmt.Fprintln(out, s.signedIn(ctx))
	fmt.Fprintln(out, "Type 'help' for the commands, 'exit' or Ctrl-D to leave.")
}

// signedInTimeout bounds the banner's question to the API.
const signedInTimeout = 10 * time.Second

func (s *shell) signedIn(ctx context.Context) string {
	a := &app{env: s.commandEnv(), restricted: true}
	cfg, _, err := a.loadConfig()
	if err != nil {
		return fmt.Sprintf("Configuration: %v", err)
	}
	target, token, scheme := a.settings(cfg)
	switch {
	case target == "":
		return "Not signed in: type 'login --url URL'."
	case token == "":
		return fmt.Sprintf("API %s; not signed in: type 'login'.", target)
	}
	ctx, cancel := context.WithTimeout(ctx, signedInTimeout)
	defer cancel()
	who, err := a.whoami(ctx, target, token, scheme, cfg.Insecure)
	if err != nil {
		return fmt.Sprintf("API %s: %s", target, errorSummary(err))
	}
	return fmt.Sprintf("API %s, signed in as %s (role %s).", target, who.Username, who.role())
}

var dnsLabel = regexp.MustCompile(`^[A-Za-z0-9-]{1,63}$`)

// hostLabel is this host's name, as far as it is a plain DNS label.
func hostLabel() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if !dnsLabel.MatchString(host) {
		return ""
	}
	return host
}

func shellPrompt() string {
	if host := hostLabel(); host != "" {
		return "fulcrum@" + host + "> "
	}
	return "fulcrum> "
}

// completer completes command names with Tab (flags and names of objects are not).
func (s *shell) completer() func(line string, pos int, key rune) (string, int, bool) {
	root := (&app{env: s.env, restricted: true}).rootCommand()
	root.InitDefaultHelpCmd()
	return func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		completed, ok := completeCommand(root, line[:pos])
		if !ok {
			return "", 0, false
		}
		return completed + line[pos:], len(completed), true
	}
}

// completeCommand extends the last word of before to the longest name of a
// subcommand it starts (and a space when only one does).
func completeCommand(root *cobra.Command, before string) (string, bool) {
	words := strings.Fields(before)
	partial := ""
	if len(words) > 0 && !strings.HasSuffix(before, " ") {
		partial, words = words[len(words)-1], words[:len(words)-1]
	}
	cmd := root
	for _, word := range words {
		if word == "fulcrum" && cmd == root {
			continue
		}
		next, _, err := cmd.Find([]string{word})
		if err != nil || next == cmd {
			return "", false
		}
		cmd = next
	}
	var names []string
	for _, child := range cmd.Commands() {
		if child.IsAvailableCommand() && strings.HasPrefix(child.Name(), partial) {
			names = append(names, child.Name())
		}
	}
	if len(names) == 0 {
		return "", false
	}
	common := names[0]
	for _, name := range names[1:] {
		for !strings.HasPrefix(name, common) {
			common = common[:len(common)-1]
		}
	}
	if len(names) == 1 {
		common += " "
	}
	if common == partial {
		return "", false
	}
	return before[:len(before)-len(partial)] + common, true
}
