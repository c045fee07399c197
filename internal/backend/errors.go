package backend

import "github.com/gortapi/gortapi/internal/errs"

// Sentinel errors: the values package rtapi exports under the same names
// (rtapi.ErrInvalid, ...), so errors.Is matches either. ErrPermission is
// os.ErrPermission.
var (
	// ErrInvalid: an argument is out of range or malformed.
	ErrInvalid = errs.Invalid
	// ErrPermission: the kernel refused what real-time operation needs
	// (SCHED_FIFO, memory locking).
	ErrPermission = errs.Permission
	// ErrNotSupported: the backend or operation does not exist here.
	ErrNotSupported = errs.NotSupported
)
