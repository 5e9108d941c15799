// Command ccm keeps long Claude Code sessions healthy: it analyzes, checks,
// purges and repairs session transcripts, keeps a content-addressed store of
// everything it removes, and runs Claude Code hooks from one fast binary.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run builds the command tree, runs it under a context that SIGINT and
// SIGTERM cancel, and maps the outcome to an exit code. Tests call it
// directly; it never calls os.Exit itself.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp(stdin, stdout, stderr)
	err := app.Run(ctx, args)
	return reportError(stderr, err)
}
