package ipc

import (
	"errors"
	"fmt"

	"github.com/gortapi/gortapi/internal/errs"
)

// Sentinel errors, pre-built so returning them never allocates. Each but
// ErrOwnerDead is, or wraps, the rtapi sentinel named on it.
var (
	// ErrInvalid reports a bad argument (memory too small or misaligned,
	// a record too large, Commit without Reserve).
	ErrInvalid = errs.Invalid
	// ErrOwnerDead reports a lock taken over from an owner that died
	// holding it (EOWNERDEAD): the caller holds it, and the data it
	// protects may be half-updated.
	ErrOwnerDead = errors.New("ipc: mutex owner died; lock recovered, protected data may be inconsistent")
	// ErrNotOwner reports Unlock of a mutex held by another process
	// (rtapi.ErrState).
	ErrNotOwner = fmt.Errorf("ipc: mutex held by another process: %w", errs.State)
	// ErrNotLocked reports Unlock of an unlocked mutex (rtapi.ErrState).
	ErrNotLocked = fmt.Errorf("ipc: mutex not locked: %w", errs.State)
	// ErrBusy reports that a non-blocking call could not proceed now.
	ErrBusy = errs.Busy
	// ErrTimeout reports a passed deadline (os.ErrDeadlineExceeded,
	// rtapi.ErrTimeout).
	ErrTimeout = errs.Timeout
	// ErrOverflow reports a semaphore count at its maximum (rtapi.ErrBusy).
	ErrOverflow = fmt.Errorf("ipc: semaphore count at its maximum: %w", errs.Busy)
	// ErrFull reports a ring with no room; the write was dropped and
	// counted (rtapi.ErrBusy).
	ErrFull = fmt.Errorf("ipc: ring full: %w", errs.Busy)
	// ErrEmpty reports that a ring holds nothing to read (rtapi.ErrBusy).
	ErrEmpty = fmt.Errorf("ipc: ring empty: %w", errs.Busy)
	// ErrShortBuffer reports a destination too small for the next record;
	// the record stays in the ring (rtapi.ErrInvalid).
	ErrShortBuffer = fmt.Errorf("ipc: buffer too small for record: %w", errs.Invalid)
	// ErrNotInitialised reports ring memory not laid out by Init yet
	// (rtapi.ErrBusy).
	ErrNotInitialised = fmt.Errorf("ipc: ring not initialised: %w", errs.Busy)
	// ErrCorrupt reports an inconsistent ring header or record
	// (rtapi.ErrCorrupt).
	ErrCorrupt = fmt.Errorf("ipc: ring corrupt: %w", errs.Corrupt)
	// ErrWrongMode reports a ring opened in the other mode (rtapi.ErrInvalid).
	ErrWrongMode = fmt.Errorf("ipc: ring has the other mode: %w", errs.Invalid)
	// ErrClosed is os.ErrClosed: a ring Wait after Close.
	ErrClosed = errs.Closed
)
