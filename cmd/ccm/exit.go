package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
)

// Exit codes, in one table. Every command's help lists the ones it uses.
const (
	exitOK       = 0   // success
	exitFindings = 1   // the command worked and found problems (ccm check), or some files of a batch failed
	exitError    = 2   // usage error, unreadable input, I/O error
	exitLocked   = 4   // the CCM store or a transcript is locked by another ccm process
	exitCanceled = 130 // interrupted by SIGINT or SIGTERM
)

// exitStatusHelp is appended to commands' descriptions.
const exitStatusHelp = `EXIT STATUS:
   0    success
   1    problems found, or some files of a batch failed
   2    usage error, unreadable input or I/O error
   4    the CCM store or a transcript is locked by another ccm process
   130  interrupted`

// errFindings is returned by commands that report problems they found
// themselves (already printed); it maps to exit code 1 without a message.
var errFindings = errors.New("problems found")

// errLocked marks errors caused by a lock held by another ccm process.
var errLocked = errors.New("locked by another ccm process")

// usageError marks a wrong invocation; it maps to exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// silentError carries an exit code for a failure whose message has already
// been printed.
type silentError struct{ code int }

func (e silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCodeOf maps an error returned by a command to the process exit code.
func exitCodeOf(err error) int {
	var se silentError
	var ec cli.ExitCoder
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		return se.code
	case errors.Is(err, errFindings):
		return exitFindings
	case errors.Is(err, context.Canceled):
		return exitCanceled
	case errors.Is(err, errLocked), errors.Is(err, ccm.ErrLocked):
		return exitLocked
	case errors.As(err, &ec):
		if ec.ExitCode() == 0 {
			return exitOK
		}
		return exitError
	default:
		return exitError
	}
}

// reportError prints err as one "ccm: ..." line (unless it was already
// reported) and returns the exit code.
func reportError(stderr io.Writer, err error) int {
	code := exitCodeOf(err)
	if err == nil || errors.Is(err, errFindings) {
		return code
	}
	var se silentError
	if errors.As(err, &se) {
		return code
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "ccm: interrupted")
		return code
	}
	msg := strings.TrimSpace(err.Error())
	msg = strings.TrimPrefix(msg, "ccm: ")
	// One line: later lines of a wrapped error are hints, keep them indented.
	msg = strings.ReplaceAll(msg, "\n", "\n  ")
	fmt.Fprintf(stderr, "ccm: %s\n", msg)
	return code
}
