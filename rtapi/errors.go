package rtapi

import (
	"errors"
	"fmt"

	"github.com/gortapi/gortapi/internal/errs"
)

// Sentinel errors: every error of rtapi and the packages under it matches
// at least one with errors.Is; the packages' own sentinels (shm.ErrTruncated,
// ipc.ErrFull, ...) wrap them. ErrClosed, ErrTimeout, ErrPermission,
// ErrExist and ErrNotExist are the os package's. The exception is
// ipc.ErrOwnerDead: no failure, the lock was taken from a dead owner.
var (
	// ErrInvalid: an argument is out of range, malformed or a duplicate.
	ErrInvalid = errs.Invalid
	// ErrPermission: the kernel refused SCHED_FIFO or memory locking, or a
	// shared-memory segment is writable by a user this process does not trust.
	ErrPermission = errs.Permission
	// ErrNotSupported: the flavor, operation or layout does not exist here.
	ErrNotSupported = errs.NotSupported
	// ErrState: the call does not fit the state of its object (Start
	// twice, Resume without Pause, Unlock of a mutex not held).
	ErrState = errs.State
	// ErrClosed: the RT instance, segment or ring handle was closed.
	ErrClosed = errs.Closed
	// ErrTimeout: a deadline or bounded wait ran out
	// (os.ErrDeadlineExceeded).
	ErrTimeout = errs.Timeout
	// ErrBusy: the call could not proceed now and may later (a held
	// mutex, a full or empty ring, a segment its creator has not finished).
	ErrBusy = errs.Busy
	// ErrCorrupt: shared memory holds what its writer cannot have
	// written: a damaged ring, a truncated or overwritten segment.
	ErrCorrupt = errs.Corrupt
	// ErrExist: a segment to create exists already.
	ErrExist = errs.Exist
	// ErrNotExist: a segment to attach does not exist.
	ErrNotExist = errs.NotExist
	// ErrFaulted matches a *FaultError (the watchdog stopped a runaway
	// task) and a *DeadlineError (the task's DeadlinePolicy ended it).
	ErrFaulted = errors.New("task faulted")
	// ErrGoexit is what Wait returns for a task whose body called
	// runtime.Goexit (as testing.T.FailNow does); the task ended normally.
	ErrGoexit = errors.New("task body called runtime.Goexit")
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

// PanicError is what Wait returns when a task body panicked; the other
// tasks keep running.
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
