// Command fulcrum is the Fulcrum command line: the REST API for people at a
// terminal and for scripts. Its commands live in internal/cli.
//
// Run as fulcrum-shell (a link to it, the appliance admin's login shell; sshd
// runs it as -fulcrum-shell, or fulcrum-shell -c LINE) it is the restricted
// shell, the same as `fulcrum shell`.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/term"

	"fulcrum/agents/internal/cli"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// shellName is the name the restricted login shell is run by.
const shellName = "fulcrum-shell"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	env := cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Version: version,
		Interrupts: interrupts, Terminal: cli.StdTerminal(os.Stdin, os.Stderr),
	}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		env.ReadPassword = func() ([]byte, error) { return term.ReadPassword(fd) }
	}
	var code int
	if strings.TrimPrefix(filepath.Base(os.Args[0]), "-") == shellName {
		code = cli.RunShell(ctx, os.Args[1:], env)
	} else {
		code = cli.Run(ctx, os.Args[1:], env)
	}
	stop()
	os.Exit(code)
}
