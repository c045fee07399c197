package sys

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Priority-inheritance futex operations (futex(2), "Priority-inheritance
// futexes"). The word holds the owner's thread id; the kernel boosts the
// owner to the highest waiter's priority while it holds the word.
const (
	futexLockPI   = 6  // FUTEX_LOCK_PI: absolute CLOCK_REALTIME timeout
	futexUnlockPI = 7  // FUTEX_UNLOCK_PI
	futexLockPI2  = 13 // FUTEX_LOCK_PI2 (Linux 5.14): absolute CLOCK_MONOTONIC timeout

	// FutexWaiters and FutexOwnerDied are the kernel's bits in a PI futex
	// word; FutexTIDMask the owner's thread id.
	FutexWaiters   = 0x80000000
	FutexOwnerDied = 0x40000000
	FutexTIDMask   = 0x3fffffff
)

// noLockPI2 is set once the kernel answered ENOSYS to FUTEX_LOCK_PI2.
var noLockPI2 atomic.Bool

// FutexLockPI takes the PI futex at addr for the calling thread, sleeping
// in the kernel while another thread holds it (and lending that thread its
// priority). deadlineNs is an absolute CLOCK_MONOTONIC time as Nanotime
// reads it, 0 for none. It returns nil with the word holding the caller's
// tid (and FutexOwnerDied when the kernel handed over the lock of a thread
// that died holding it), or the errno as an *os.SyscallError:
// ETIMEDOUT, ESRCH (the word names a thread that does not exist),
// EDEADLK (the caller holds it already), EAGAIN (the owner is exiting:
// try again), EINVAL or EFAULT.
//
// The caller must be locked to its OS thread (runtime.LockOSThread): the
// lock belongs to the thread. FutexLockPI blocks; it does not allocate
// unless it returns an error.
func FutexLockPI(addr *uint32, deadlineNs int64) error {
	var tsp unsafe.Pointer
	var ts unix.Timespec
	op := uintptr(futexLockPI)
	if deadlineNs > 0 {
		if !noLockPI2.Load() {
			op = futexLockPI2
			ts = Timespec(deadlineNs)
		} else {
			// FUTEX_LOCK_PI's deadline is on CLOCK_REALTIME.
			var now unix.Timespec
			_ = unix.ClockGettime(unix.CLOCK_REALTIME, &now)
			ts = Timespec(now.Nano() + deadlineNs - Nanotime())
		}
		tsp = unsafe.Pointer(&ts)
	}
	for {
		_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), op, 0, uintptr(tsp), 0, 0)
		switch {
		case e == 0:
			return nil
		case e == unix.EINTR:
			continue // the kernel restarts LOCK_PI itself; older ones may not
		case e == unix.ENOSYS && op == futexLockPI2:
			noLockPI2.Store(true)
			return FutexLockPI(addr, deadlineNs)
		}
		return os.NewSyscallError("futex_lock_pi", e)
	}
}

// FutexUnlockPI releases the PI futex at addr held by the calling thread
// and hands it to the highest-priority waiter, if any. EPERM when the
// caller does not hold it. It never blocks and does not allocate unless
// it returns an error.
func FutexUnlockPI(addr *uint32) error {
	_, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexUnlockPI, 0, 0, 0, 0)
	if e != 0 {
		return os.NewSyscallError("futex_unlock_pi", e)
	}
	return nil
}
