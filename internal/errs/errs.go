// Package errs holds the one set of sentinel errors that every gortapi
// package's errors match with errors.Is. Package rtapi exports them
// (rtapi.ErrInvalid, ...); the other packages export the same values
// under their own names, or sentinels of their own that wrap one of them,
// so a caller can test any error against rtapi's set without knowing which
// package it came from.
//
// Closed, Timeout, Exist, NotExist and Permission are the os package's
// errors, so they also match what the standard library returns for the
// same conditions (a syscall's EPERM matches Permission).
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
	// State: the call does not fit the state of its object (Start
	// twice, Unlock of a mutex not held, a controller call from a body).
	State = errors.New("wrong state")
	// Closed: the object was closed.
	Closed = os.ErrClosed
	// Timeout: a deadline or a bounded wait ran out.
	Timeout = os.ErrDeadlineExceeded
	// Busy: the call could not proceed now and may succeed later (a held
	// mutex, a full or empty ring, a segment still being created).
	Busy = errors.New("busy, try again")
	// Corrupt: shared memory holds what its writer cannot have written (a
	// damaged ring, a truncated or overwritten segment).
	Corrupt = errors.New("shared memory corrupt")
	// Exist: the thing to create exists already.
	Exist = os.ErrExist
	// NotExist: the thing to open does not exist.
	NotExist = os.ErrNotExist
)
