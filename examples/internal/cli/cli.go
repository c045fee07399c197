// Package cli holds what the example programs share: their exit status
// (0 for success and -help, 2 for bad usage, 1 for any other failure) and
// whether their output is a terminal (IsTerminal, built per system).
package cli

import (
	"errors"
	"fmt"
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
