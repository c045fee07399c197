// Package errs holds the one set of sentinel errors that every gortapi
// error matches with errors.Is; rtapi exports them (rtapi.ErrInvalid, ...),
// other packages the same values or sentinels wrapping them. Closed,
// Timeout, Exist, NotExist and Permission are the os package's, so they
// match the standard library's too (a syscall's EPERM matches Permission).
package errs

import (
	"errors"
	"os"
)

var (
	// Invalid: an argument is out of range, malformed or a duplicate.
	Invalid = errors.New("invalid argument")
	// Permission: the kernel or a trust check refused (SCHED_FIFO,
	// memory locking, a segment file someone untrusted may write).
	Permission = os.ErrPermission
	// NotSupported: the flavor, operation or layout does not exist here.
	NotSupported = errors.New("not supported")
	// State: the call does not fit its object's state (Start twice).
	State = errors.New("wrong state")
	// Closed: the object was closed.
	Closed = os.ErrClosed
	// Timeout: a deadline or a bounded wait ran out.
	Timeout = os.ErrDeadlineExceeded
	// Busy: try again later (a held mutex, a full or empty ring).
	Busy = errors.New("busy, try again")
	// Corrupt: shared memory holds what its writer cannot have written.
	Corrupt = errors.New("shared memory corrupt")
	// Exist: the thing to create exists already.
	Exist = os.ErrExist
	// NotExist: the thing to open does not exist.
	NotExist = os.ErrNotExist
)
