package rtapi

import (
	"errors"
	"fmt"

	"github.com/gortapi/gortapi/internal/errs"
)

// Sentinel errors: one set for gortapi. Every error of rtapi and of the
// packages under it (shm, ipc, msg, hist, sim, hal, ...) matches at least
// one of them with errors.Is, and says in its text what was wrong and,
// where there is one, what to do. The packages' own sentinels (shm.ErrTruncated,
// ipc.ErrFull, ...) wrap these, so a caller may test the precise one or
// the class. ErrClosed, ErrTimeout, ErrPermission, ErrExist and
// ErrNotExist are the os package's errors. The one exception is
// ipc.ErrOwnerDead, which is no failure: the lock call succeeded and took
// over a lock whose owner died (EOWNERDEAD).
var (
	// ErrInvalid: an argument is out of range, malformed or a duplicate.
	ErrInvalid = errs.Invalid
	// ErrPermission: the kernel refused SCHED_FIFO or memory locking, or
	// a shared-memory segment is writable by a user this process does not
	// trust (os.ErrPermission).
	ErrPermission = errs.Permission
	// ErrNotSupported: the flavor, operation or layout does not exist here.
	ErrNotSupported = errs.NotSupported
	// ErrState: the call does not fit the state of its object (Start
	// twice, Resume without Pause, Wait on a task never started, Unlock of
	// a mutex not held, a sim controller call from a task body, a sim task
	// lifecycle call from another goroutine while the controller runs).
	ErrState = errs.State
	// ErrClosed: the RT instance, segment or ring handle was closed
	// (os.ErrClosed).
	ErrClosed = errs.Closed
	// ErrTimeout: a deadline or a bounded wait ran out: a task that would
	// not stop, a semaphore or mutex deadline, a sim condition
	// (os.ErrDeadlineExceeded).
	ErrTimeout = errs.Timeout
	// ErrBusy: the call could not proceed now and may later: a held
	// mutex, a zero semaphore, a full or empty ring, a segment or ring its
	// creator has not finished.
	ErrBusy = errs.Busy
	// ErrCorrupt: shared memory holds what its writer cannot have
	// written: a damaged ring, a truncated or overwritten segment.
	ErrCorrupt = errs.Corrupt
	// ErrExist: a segment to create exists already (os.ErrExist).
	ErrExist = errs.Exist
	// ErrNotExist: a segment to attach does not exist (os.ErrNotExist).
	ErrNotExist = errs.NotExist
	// ErrFaulted matches a *FaultError (the watchdog stopped a runaway
	// task) and a *DeadlineError (the task's DeadlinePolicy ended it).
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
