// Command ccm keeps long Claude Code sessions healthy: it analyzes, checks,
// purges and repairs session transcripts, keeps a content-addressed store of
// everything it removes, and runs Claude Code hooks from one fast binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"ccm/hooklib"
	"ccm/transcript"
)

func main() {
	os.Exit(ccmMain(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// ccmMain is main without the exit. `ccm hook EVENT` skips the command
// tree: Claude Code starts a hook process on every event, and building the
// tree of every command and flag costs about a third of that start (page
// faults dominate process start on small VMs; scripts/bench-hooks.sh).
func ccmMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if event, ok := hookFastPath(args); ok {
		return hooklib.Run(context.Background(), hooklib.Options{
			Event: event, ClaudeDir: transcript.ConfigDir(""), Stdin: stdin, Stdout: stdout,
		})
	}
	exitAfterSignal(time.Second)
	return run(args, stdin, stdout, stderr)
}

// exitAfterSignal ends the process when a command has not returned within
// grace of SIGINT or SIGTERM. Commands stop at their next check of the
// context, which a read blocked in the kernel (stdin that never closes, a
// hung network mount) never reaches. Nothing is half-written by the exit:
// every file ccm replaces is written beside it and renamed into place, and
// the temp files a killed run leaves are removed by the next one.
func exitAfterSignal(grace time.Duration) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		time.Sleep(grace)
		fmt.Fprintln(os.Stderr, "ccm: interrupted")
		os.Exit(exitCanceled)
	}()
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
