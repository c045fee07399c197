// Package cli holds what the example programs share: their exit status
// (0 for success and -help, 2 for bad usage, 1 for any other failure), the
// main that runs them until Ctrl-C (Main), and whether their output is a
// terminal (IsTerminal, built per system).
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// UsageError is a setting a program refuses: exit status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// ExitCode is 2 for bad usage (a UsageError anywhere in err's chain), 1
// for any other failure.
func ExitCode(err error) int {
	var u UsageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// Main runs f with a context that ends on SIGINT or SIGTERM. An error
// from f is printed as "name: err" on stderr and exits with ExitCode.
func Main(name string, f func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := f(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(ExitCode(err))
	}
}
