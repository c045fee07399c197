package backend

import "github.com/gortapi/gortapi/internal/errs"

// Sentinel errors, the values rtapi exports under the same names.
var (
	// ErrInvalid: an argument is out of range or malformed.
	ErrInvalid = errs.Invalid
	// ErrPermission (os.ErrPermission): the kernel refused SCHED_FIFO or
	// memory locking.
	ErrPermission = errs.Permission
	// ErrNotSupported: the backend or operation does not exist here.
	ErrNotSupported = errs.NotSupported
)
