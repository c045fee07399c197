package rtapi

import (
	"errors"
	"fmt"
	"os"

	"github.com/gortapi/gortapi/flavors"
)

// Sentinel errors. Every error rtapi returns matches one of them with
// errors.Is, and says in its text what was wrong and, where there is one,
// what to do.
var (
	// ErrInvalid: an argument is out of range, malformed or a duplicate.
	ErrInvalid = flavors.ErrInvalid
	// ErrPermission: the kernel refused SCHED_FIFO or memory locking.
	ErrPermission = flavors.ErrPermission
	// ErrNotSupported: the flavor or operation does not exist here.
	ErrNotSupported = flavors.ErrNotSupported
	// ErrState: the call does not fit the task's state (Start twice,
	// Resume without Pause, Wait on a task never started).
	ErrState = errors.New("wrong state")
	// ErrClosed: the RT instance was closed.
	ErrClosed = os.ErrClosed
	// ErrTimeout: a bounded wait ran out (a task that would not stop).
	ErrTimeout = os.ErrDeadlineExceeded
	// ErrFaulted matches a *FaultError: the watchdog stopped a runaway
	// task.
	ErrFaulted = errors.New("task faulted")
)

// TaskError is an error about one task.
type TaskError struct {
	Task string // the task's name
	Op   string // what was attempted: "new", "start", "pause", ...
	Err  error
}

func (e *TaskError) Error() string { return fmt.Sprintf("task %q: %s: %v", e.Task, e.Op, e.Err) }
func (e *TaskError) Unwrap() error { return e.Err }

func taskErr(name, op string, err error) error { return &TaskError{Task: name, Op: op, Err: err} }

func taskErrf(name, op string, sentinel error, format string, args ...any) error {
	return &TaskError{Task: name, Op: op, Err: fmt.Errorf(format+": %w", append(args, sentinel)...)}
}

// PanicError is what Wait returns when a task body panicked: the task
// ended, the others kept running.
type PanicError struct {
	Task  string
	Value any    // the value passed to panic
	Stack []byte // the body's goroutine stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("task %q panicked: %v\n%s", e.Task, e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ErrGoexit is what Wait returns for a task whose body called
// runtime.Goexit (as testing.T.FailNow and testify's require do) instead
// of returning. The task ended like any other: its timer was released and
// its thread destroyed.
var ErrGoexit = errors.New("task body called runtime.Goexit")
