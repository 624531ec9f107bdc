// Command fulcrum is the Fulcrum command line: the REST API for people at a
// terminal and for scripts. Its commands live in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"fulcrum/agents/internal/cli"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Version: version}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		env.ReadPassword = func() ([]byte, error) { return term.ReadPassword(fd) }
	}
	code := cli.Run(ctx, os.Args[1:], env)
	stop()
	os.Exit(code)
}
