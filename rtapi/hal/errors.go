package hal

import (
	"fmt"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ErrCorrupt reports a segment whose contents break its layout: a count
// out of range, an index past the table, a foreign header, a record that
// never holds still. It matches shm.ErrCorrupt and rtapi.ErrInvalid. A
// Monitor that reports it stays usable.
var ErrCorrupt = fmt.Errorf("hal: stats segment corrupt: %w (%w)", shm.ErrCorrupt, rtapi.ErrInvalid)

// notWritten is the error of a header its creator has not written yet:
// the segment exists, its HAL magic is still zero. It matches
// shm.ErrNotInitialised, so a reader waiting for a host retries.
func notWritten(kind string) error {
	return fmt.Errorf("%s segment header not written yet: %w", kind, shm.ErrNotInitialised)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrCorrupt)...)
}

// Error is an error about a HAL call: what was attempted, on which thread
// and function, and why. Err matches one of rtapi's sentinels (ErrInvalid,
// ErrState, ErrClosed, ...) with errors.Is.
type Error struct {
	Op     string // "new thread", "export", "add funct", "remove funct", "start", ...
	Thread string // the thread concerned, if any
	Funct  string // the function concerned, if any
	Err    error
}

func (e *Error) Error() string {
	s := "hal: " + e.Op
	if e.Funct != "" {
		s += fmt.Sprintf(" function %q", e.Funct)
	}
	if e.Thread != "" {
		s += fmt.Sprintf(" thread %q", e.Thread)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func errf(op, thread, funct string, sentinel error, format string, args ...any) error {
	return &Error{Op: op, Thread: thread, Funct: funct, Err: fmt.Errorf(format+": %w", append(args, sentinel)...)}
}

// PanicError is the error a thread ends with when one of its functions
// panicked; the other threads kept running. errors.As also finds the
// *rtapi.PanicError it wraps.
type PanicError struct {
	Thread string // the thread that stopped
	Funct  string // the function that panicked
	Value  any    // the value passed to panic
	Stack  []byte // the function's goroutine stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("hal: function %q panicked in thread %q, which stopped: %v\n%s", e.Funct, e.Thread, e.Value, e.Stack)
}

// Unwrap returns the task's *rtapi.PanicError (and through it the value).
func (e *PanicError) Unwrap() error {
	return &rtapi.PanicError{Task: e.Thread, Value: e.Value, Stack: e.Stack}
}
