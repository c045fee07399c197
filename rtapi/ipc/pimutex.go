package ipc

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ErrRecursive reports Lock of a PIMutex by the thread that holds it
// already (rtapi.ErrState).
var ErrRecursive = fmt.Errorf("ipc: PI mutex already held by this thread: %w", errs.State)

// errPIWordUnstable reports a word a peer rewrote on every take-over try.
var errPIWordUnstable = fmt.Errorf("ipc: PI mutex word rewritten on every take-over attempt: %w", errs.Corrupt)

const piTakeoverTries = 1024 // bounds Lock's take-overs of a dead holder's word

// PIMutex is a priority-inheritance mutex in shared memory (FUTEX_LOCK_PI):
// its holder runs at the priority of its highest waiter. Its zero value is
// unlocked; it is 8 bytes, 4-byte aligned and pointer-free.
//
// The lock belongs to a thread: a Lock or TryLock that takes it locks the
// calling goroutine to its OS thread until the same goroutine's Unlock
// (nesting with its own runtime.LockOSThread). Taking the lock of a thread
// that exited holding it returns ErrOwnerDead; a reused thread id reads as
// alive. A peer that may write the segment may name any thread as holder and
// so boost it: share a PIMutex only with trusted writers (docs/SECURITY.md).
type PIMutex struct {
	word uint32
	_    uint32
}

// PIMutexAt returns the PIMutex at offset off of seg.
func PIMutexAt(seg *shm.Segment, off int) (*PIMutex, error) { return shm.View[PIMutex](seg, off) }

// Lock takes the lock, waiting as long as needed and lending the holder the
// caller's priority: nil or ErrOwnerDead with the lock held; ErrRecursive or
// a system call error without. It blocks.
func (m *PIMutex) Lock() error { return m.lock(0) }

// LockDeadline is Lock with an absolute CLOCK_MONOTONIC deadline in
// nanoseconds, as rtapi.Now reads it; ErrTimeout when it passes.
func (m *PIMutex) LockDeadline(deadlineNs int64) error {
	if deadlineNs <= 0 {
		deadlineNs = 1 // 0 means "no deadline" inside lock
	}
	return m.lock(deadlineNs)
}

// TryLock takes the lock if it is free and returns nil; ErrBusy if a live
// thread holds it; ErrOwnerDead if it took it over from a dead one. It never
// blocks; it makes a gettid call and, when the lock is held, a kill(tid, 0).
// RT-safe.
func (m *PIMutex) TryLock() error {
	runtime.LockOSThread()
	tid := uint32(sys.Gettid())
	if atomic.CompareAndSwapUint32(&m.word, 0, tid) {
		return nil
	}
	v := atomic.LoadUint32(&m.word)
	if v&sys.FutexTIDMask != tid && !alive(v&sys.FutexTIDMask) &&
		atomic.CompareAndSwapUint32(&m.word, v, tid|v&sys.FutexWaiters) {
		return ErrOwnerDead
	}
	runtime.UnlockOSThread()
	return ErrBusy
}

func (m *PIMutex) lock(deadline int64) error {
	runtime.LockOSThread()
	tid := uint32(sys.Gettid())
	if atomic.CompareAndSwapUint32(&m.word, 0, tid) {
		return nil
	}
	for tries := 0; ; {
		if deadline != 0 && sys.Nanotime() >= deadline {
			runtime.UnlockOSThread()
			return ErrTimeout
		}
		err := sys.FutexLockPI(&m.word, deadline)
		switch {
		case err == nil:
			return m.acquired()
		case errors.Is(err, syscall.ESRCH):
			// The holder died with no waiter queued: take it over here.
			v := atomic.LoadUint32(&m.word)
			if v&sys.FutexTIDMask != tid && !alive(v&sys.FutexTIDMask) &&
				atomic.CompareAndSwapUint32(&m.word, v, tid) {
				return ErrOwnerDead
			}
			if tries++; tries >= piTakeoverTries {
				runtime.UnlockOSThread()
				return errPIWordUnstable
			}
		case errors.Is(err, syscall.EAGAIN):
			// The holder is exiting: retry.
		case errors.Is(err, syscall.ETIMEDOUT):
			runtime.UnlockOSThread()
			return ErrTimeout
		case errors.Is(err, syscall.EDEADLK):
			runtime.UnlockOSThread()
			return ErrRecursive
		default:
			runtime.UnlockOSThread()
			return err
		}
	}
}

// acquired clears the kernel's owner-died bit, returning ErrOwnerDead if set.
func (m *PIMutex) acquired() error {
	for range 64 {
		v := atomic.LoadUint32(&m.word)
		if v&sys.FutexOwnerDied == 0 {
			return nil
		}
		if atomic.CompareAndSwapUint32(&m.word, v, v&^sys.FutexOwnerDied) {
			return ErrOwnerDead
		}
	}
	return ErrOwnerDead // a peer keeps rewriting the word; we hold the lock all the same
}

// Unlock releases the lock to the highest-priority waiter and unlocks the
// goroutine from its thread once. ErrNotLocked or ErrNotOwner leave the
// goroutine locked. It makes a gettid call, and FUTEX_UNLOCK_PI only when
// someone waits.
// RT-safe.
func (m *PIMutex) Unlock() error {
	tid := uint32(sys.Gettid())
	v := atomic.LoadUint32(&m.word)
	switch {
	case v&sys.FutexTIDMask == 0:
		return ErrNotLocked
	case v&sys.FutexTIDMask != tid:
		return ErrNotOwner
	}
	if v != tid || !atomic.CompareAndSwapUint32(&m.word, tid, 0) {
		if err := sys.FutexUnlockPI(&m.word); err != nil {
			return err
		}
	}
	runtime.UnlockOSThread()
	return nil
}

// Owner returns the kernel thread id of the holder, 0 when free.
// RT-safe.
func (m *PIMutex) Owner() int { return int(atomic.LoadUint32(&m.word) & sys.FutexTIDMask) }
