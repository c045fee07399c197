package ipc

import (
	"errors"
	"os"
)

// Sentinel errors. All are pre-built: returning them never allocates.
var (
	// ErrInvalid reports a bad argument: memory too small or misaligned, a
	// record larger than the ring allows, Commit without Reserve.
	ErrInvalid = errors.New("ipc: invalid argument")
	// ErrOwnerDead is returned by Mutex lock calls that took over a lock
	// whose owner process died holding it (EOWNERDEAD). The caller now owns
	// the lock; the data it protects may be half-updated and should be
	// checked or reset.
	ErrOwnerDead = errors.New("ipc: mutex owner died; lock recovered, protected data may be inconsistent")
	// ErrNotOwner reports Unlock of a mutex held by another process.
	ErrNotOwner = errors.New("ipc: mutex held by another process")
	// ErrNotLocked reports Unlock of an unlocked mutex.
	ErrNotLocked = errors.New("ipc: mutex not locked")
	// ErrBusy reports that a non-blocking call could not proceed now: the
	// mutex is held, the semaphore is zero, the seqlock was being written.
	ErrBusy = errors.New("ipc: busy")
	// ErrTimeout reports that a deadline passed before the call could
	// proceed.
	ErrTimeout = errors.New("ipc: deadline exceeded")
	// ErrOverflow reports a semaphore count at its maximum.
	ErrOverflow = errors.New("ipc: semaphore count overflow")
	// ErrFull reports that a ring has no room for the record now; the record
	// was dropped and counted.
	ErrFull = errors.New("ipc: ring full")
	// ErrEmpty reports that a ring holds nothing to read.
	ErrEmpty = errors.New("ipc: ring empty")
	// ErrShortBuffer reports a destination too small for the next record;
	// the record stays in the ring.
	ErrShortBuffer = errors.New("ipc: buffer too small for record")
	// ErrNotInitialised reports ring memory that has not been laid out by
	// Init yet.
	ErrNotInitialised = errors.New("ipc: ring not initialised")
	// ErrCorrupt reports ring memory whose header is inconsistent.
	ErrCorrupt = errors.New("ipc: ring header corrupt")
	// ErrWrongMode reports opening a record ring as a stream ring or the
	// other way round.
	ErrWrongMode = errors.New("ipc: ring has the other mode")
	// ErrClosed is os.ErrClosed, returned by a ring Wait after Close of the
	// handle.
	ErrClosed = os.ErrClosed
)
