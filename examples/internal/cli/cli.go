// Package cli holds what the example programs share: their command line
// (HACKING.md, "Examples: one command-line style"): the usage text
// (Usage), parsing (Parse) and the exit status (0 for success and -help,
// 2 for bad usage, 1 for any other failure: Exit, ExitCode); the main
// that runs them until Ctrl-C (Main); and whether their output is a
// terminal (IsTerminal, built per system).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
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

// Usage gives fs the examples' usage text: "usage: NAME SYNOPSIS", then
// more (other lines, or ""), then "flags:" and the flags, on fs's output.
func Usage(fs *flag.FlagSet, synopsis, more string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s %s\n", fs.Name(), synopsis)
		if more != "" {
			fmt.Fprintln(w, strings.TrimRight(more, "\n"))
		}
		fmt.Fprintln(w, "flags:")
		fs.PrintDefaults()
	}
}

// Parse parses args with fs, a flag.ContinueOnError set writing to the
// program's stderr. It returns nil, flag.ErrHelp after -h or -help
// printed the usage, or a UsageError: for a bad flag (the flag package
// has printed why and the usage) or an argument where none is taken.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Exit returns the exit status of a program whose run returned err: 0
// for nil and flag.ErrHelp, else ExitCode(err), after printing
// "name: err" on stderr.
func Exit(name string, stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitCode(err)
}
