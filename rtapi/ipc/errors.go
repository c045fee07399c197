package ipc

import (
	"errors"
	"fmt"

	"github.com/gortapi/gortapi/internal/errs"
)

// Sentinel errors. All are pre-built: returning them never allocates. Each
// but ErrOwnerDead (a lock taken, with a warning) is one of rtapi's
// sentinels or wraps one, named on each, so errors.Is matches either.
var (
	// ErrInvalid reports a bad argument: memory too small or misaligned, a
	// record larger than the ring allows, Commit without Reserve.
	ErrInvalid = errs.Invalid
	// ErrOwnerDead is returned by Mutex lock calls that took over a lock
	// whose owner process died holding it (EOWNERDEAD). The caller now owns
	// the lock; the data it protects may be half-updated and should be
	// checked or reset.
	ErrOwnerDead = errors.New("ipc: mutex owner died; lock recovered, protected data may be inconsistent")
	// ErrNotOwner reports Unlock of a mutex held by another process
	// (rtapi.ErrState).
	ErrNotOwner = fmt.Errorf("ipc: mutex held by another process: %w", errs.State)
	// ErrNotLocked reports Unlock of an unlocked mutex (rtapi.ErrState).
	ErrNotLocked = fmt.Errorf("ipc: mutex not locked: %w", errs.State)
	// ErrBusy reports that a non-blocking call could not proceed now: the
	// mutex is held, the semaphore is zero, the seqlock was being written.
	ErrBusy = errs.Busy
	// ErrTimeout reports that a deadline passed before the call could
	// proceed. It is os.ErrDeadlineExceeded (rtapi.ErrTimeout).
	ErrTimeout = errs.Timeout
	// ErrOverflow reports a semaphore count at its maximum
	// (rtapi.ErrBusy: a Take makes room).
	ErrOverflow = fmt.Errorf("ipc: semaphore count at its maximum: %w", errs.Busy)
	// ErrFull reports that a ring has no room for the record now; the record
	// was dropped and counted (rtapi.ErrBusy).
	ErrFull = fmt.Errorf("ipc: ring full: %w", errs.Busy)
	// ErrEmpty reports that a ring holds nothing to read (rtapi.ErrBusy).
	ErrEmpty = fmt.Errorf("ipc: ring empty: %w", errs.Busy)
	// ErrShortBuffer reports a destination too small for the next record;
	// the record stays in the ring (rtapi.ErrInvalid).
	ErrShortBuffer = fmt.Errorf("ipc: buffer too small for record: %w", errs.Invalid)
	// ErrNotInitialised reports ring memory that has not been laid out by
	// Init yet (rtapi.ErrBusy: the creator has not got there yet).
	ErrNotInitialised = fmt.Errorf("ipc: ring not initialised: %w", errs.Busy)
	// ErrCorrupt reports ring memory whose header or records are
	// inconsistent (rtapi.ErrCorrupt).
	ErrCorrupt = fmt.Errorf("ipc: ring corrupt: %w", errs.Corrupt)
	// ErrWrongMode reports opening a record ring as a stream ring or the
	// other way round (rtapi.ErrInvalid).
	ErrWrongMode = fmt.Errorf("ipc: ring has the other mode: %w", errs.Invalid)
	// ErrClosed is os.ErrClosed, returned by a ring Wait after Close of the
	// handle.
	ErrClosed = errs.Closed
)
