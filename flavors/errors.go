package flavors

import "errors"

// Sentinel errors, shared with package rtapi (which re-exports them). Test
// with errors.Is.
var (
	// ErrInvalid: an argument is out of range or malformed.
	ErrInvalid = errors.New("invalid argument")
	// ErrPermission: the kernel refused what real-time operation needs
	// (SCHED_FIFO, memory locking).
	ErrPermission = errors.New("permission denied")
	// ErrNotSupported: the backend or operation does not exist here.
	ErrNotSupported = errors.New("not supported")
)
