package rtapi

import (
	"errors"
	"fmt"

	"github.com/gortapi/gortapi/internal/ipc"
)

// Primitives that live in shared memory. Each works between processes that
// attach the same segment and between tasks or goroutines of one process.
// Mutex, Semaphore and Seqlock are pointer-free and their zero value is
// ready: embed them in a struct mapped with View, or get one at an offset
// with Segment.Mutex, Segment.Semaphore or SeqlockAt. They also work as
// ordinary Go values (new(rtapi.Semaphore)) between two tasks of one
// process.
type (
	// Mutex is a futex lock whose word holds the owner's pid
	// (rtapi_mutex_get/try/give, sleeping instead of spinning). Lock from
	// a process finding the owner dead takes the lock and returns
	// ErrOwnerDead. TryLock and Unlock are RT-safe; Lock blocks.
	Mutex = ipc.Mutex
	// Semaphore is a counting semaphore (rtapi_sem give / take / try /
	// take with deadline). Give and TryTake are RT-safe; Take and
	// TakeDeadline block. Deadlines are absolute RT.Now nanoseconds
	// (CLOCK_MONOTONIC; not virtual time on the sim flavor).
	Semaphore = ipc.Semaphore
	// RecordRing is an SPSC ring of variable-length records; the writer
	// side is wait-free and RT-safe, the reader may poll (Peek, Get) or
	// block (Wait). Shared state another process corrupts gives
	// ErrRingCorrupt, never an access outside the ring.
	RecordRing = ipc.RecordRing
	// StreamRing is an SPSC byte stream; Write and Read are wait-free and
	// RT-safe, and return ErrRingFull (short write), ErrRingEmpty or
	// ErrRingCorrupt.
	StreamRing = ipc.StreamRing
)

// Seqlock publishes snapshots of T from one writer to any number of
// readers: Write is wait-free, readers retry only while Writes complete
// and never see a torn value, and a writer killed mid-Write leaves the
// last snapshot readable. Write, Read, ReadBounded and TryRead are RT-safe.
// Where the writer is another process that may not be trusted, read with
// ReadBounded: it gives up with ErrBusy after a set number of tries instead
// of retrying for as long as the writer keeps writing.
type Seqlock[T any] = ipc.Seqlock[T]

// IPC errors, all pre-built (returning them does not allocate).
var (
	ErrOwnerDead   = ipc.ErrOwnerDead   // Mutex taken over from a dead owner: check the data it guards
	ErrNotOwner    = ipc.ErrNotOwner    // Unlock of a Mutex another process holds
	ErrNotLocked   = ipc.ErrNotLocked   // Unlock of an unlocked Mutex
	ErrBusy        = ipc.ErrBusy        // TryLock / TryTake could not proceed now
	ErrDeadline    = ipc.ErrTimeout     // LockDeadline / TakeDeadline / Wait deadline passed
	ErrRingFull    = ipc.ErrFull        // the record was dropped (counted in Dropped)
	ErrRingEmpty   = ipc.ErrEmpty       // nothing to read
	ErrShortBuffer = ipc.ErrShortBuffer // Get: the record does not fit; it stays in the ring
	ErrRingInit    = ipc.ErrNotInitialised
	// ErrRingCorrupt: another process wrote a ring index or record header
	// that the other side cannot have written. Nothing was read or written
	// outside the ring; the ring's CorruptEvents counts it, and a reader
	// goes on with Discard.
	ErrRingCorrupt = ipc.ErrCorrupt
)

// RingSize returns the bytes a ring of capacity data bytes occupies in a
// segment (header included; capacity rounded up to a power of two).
func RingSize(capacity int) int { return ipc.RingSize(capacity) }

// ringMem checks and slices [off, off+size) of the segment.
func (s *Segment) ringMem(op string, off, size int) ([]byte, error) {
	mem := s.Bytes()
	if mem == nil {
		return nil, fmt.Errorf("rtapi.Segment.%s: %w", op, ErrClosed)
	}
	if off < 0 || size < 0 || off > len(mem) || size > len(mem)-off || off%64 != 0 {
		return nil, fmt.Errorf("rtapi.Segment.%s: ring at [%d, %d+%d) must be 64-byte aligned inside the %d-byte segment: %w",
			op, off, off, size, len(mem), ErrInvalid)
	}
	return mem[off : off+size : off+size], nil
}

// RecordRing returns a record ring occupying size bytes at offset off
// (64-byte aligned; RingSize gives size for a capacity). The attachment
// that created the segment lays the ring out; others open it and get
// ErrRingInit (retry) while the creator has not done so yet.
func (s *Segment) RecordRing(off, size int) (*RecordRing, error) {
	mem, err := s.ringMem("RecordRing", off, size)
	if err != nil {
		return nil, err
	}
	var r *RecordRing
	if s.Created() {
		r, err = ipc.InitRecordRing(mem)
	} else {
		r, err = ipc.OpenRecordRing(mem)
	}
	return r, ipcErr("RecordRing", err)
}

// StreamRing is RecordRing for a byte-stream ring.
func (s *Segment) StreamRing(off, size int) (*StreamRing, error) {
	mem, err := s.ringMem("StreamRing", off, size)
	if err != nil {
		return nil, err
	}
	var r *StreamRing
	if s.Created() {
		r, err = ipc.InitStreamRing(mem)
	} else {
		r, err = ipc.OpenStreamRing(mem)
	}
	return r, ipcErr("StreamRing", err)
}

func ipcErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ipc.ErrInvalid):
		return fmt.Errorf("rtapi.Segment.%s: %w (%w)", op, err, ErrInvalid)
	}
	return fmt.Errorf("rtapi.Segment.%s: %w", op, err)
}

// Mutex returns the Mutex at offset off of the segment (View[Mutex]).
func (s *Segment) Mutex(off int) (*Mutex, error) { return View[Mutex](s, off) }

// Semaphore returns the Semaphore at offset off of the segment.
func (s *Segment) Semaphore(off int) (*Semaphore, error) { return View[Semaphore](s, off) }

// SeqlockAt returns the Seqlock[T] at offset off of the segment; T must be
// pointer-free.
func SeqlockAt[T any](s *Segment, off int) (*Seqlock[T], error) { return View[Seqlock[T]](s, off) }
