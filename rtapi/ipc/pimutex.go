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

// errPIWordUnstable reports a PI mutex word that another process kept
// rewriting while Lock tried to take over a dead owner's lock.
var errPIWordUnstable = fmt.Errorf("ipc: PI mutex word rewritten on every take-over attempt: %w", errs.Corrupt)

// piTakeoverTries bounds Lock's attempts to take over a word that names a
// dead thread, against a peer that rewrites it every time.
const piTakeoverTries = 1024

// PIMutex is a priority-inheritance mutex in shared memory, between
// processes and between goroutines of one process: while a thread holds
// it, the kernel runs that thread at the priority of the highest waiter
// (FUTEX_LOCK_PI). Its zero value is unlocked; it is 8 bytes, 4-byte
// aligned and pointer-free, so it can be embedded in a struct mapped onto
// a segment (or found with PIMutexAt).
//
// The lock belongs to a thread: Lock locks the calling goroutine to its OS
// thread and Unlock, called by the same goroutine, unlocks it; the calls
// nest with the goroutine's own runtime.LockOSThread.
//
// When a holder's thread exits, the kernel hands the lock to the highest
// waiter, and a Lock that finds the word naming a gone thread takes it
// over; either gets ErrOwnerDead. As with Mutex, a reused thread id reads
// as alive, and processes must share a pid namespace. A process that may
// write the segment may name any thread as the holder, and so boost it:
// share a PIMutex only with trusted writers (docs/SECURITY.md).
type PIMutex struct {
	word uint32
	_    uint32
}

// PIMutexAt returns the PIMutex at offset off of seg.
func PIMutexAt(seg *shm.Segment, off int) (*PIMutex, error) { return shm.View[PIMutex](seg, off) }

// Lock takes the lock, waiting as long as needed while lending the
// holder the caller's priority. It returns nil, or ErrOwnerDead with the
// lock taken over from a dead thread, and the goroutine locked to its
// thread until Unlock; ErrRecursive if this thread holds it already, or
// a system call error, with the lock not held. It blocks, so a task body
// that must not sleep uses TryLock.
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
// thread holds it; ErrOwnerDead if it took it over from a dead thread. On
// nil and ErrOwnerDead the goroutine stays locked to its thread until
// Unlock. It never blocks; it makes a gettid system call and, when the
// lock is held, a kill(tid, 0) to check that the holder is alive.
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
			// The word names a thread that is gone and never released it
			// (no waiter was queued, so the kernel had nothing to hand
			// over): take it over here.
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
			// The holder is exiting right now: the kernel will hand the
			// lock over or the next try sees it gone.
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

// acquired clears the owner-died bit the kernel set when it handed over
// the lock of a thread that died holding it, and says so.
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

// Unlock releases the lock, hands it to the highest-priority waiter if
// any, and unlocks the goroutine from its thread once (the LockOSThread of
// Lock). ErrNotLocked if it is not held, ErrNotOwner if another thread
// holds it; the goroutine stays locked then. It makes a gettid system
// call, and FUTEX_UNLOCK_PI only when someone waits.
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
