package sys

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Priority-inheritance futex operations: the word holds the owner's tid,
// which the kernel boosts to its highest waiter's priority.
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

// FutexLockPI takes the PI futex at addr for the calling thread, blocking
// while another holds it. deadlineNs is absolute on Nanotime's clock, 0 for
// none. It returns nil with the word holding the caller's tid (plus
// FutexOwnerDied when the owner died holding it), or an *os.SyscallError:
// ETIMEDOUT, ESRCH (no such owner), EDEADLK (held already), EAGAIN (the
// owner is exiting), EINVAL or EFAULT. The caller must be locked to its OS
// thread. It allocates only on error.
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

// FutexUnlockPI releases the calling thread's PI futex at addr to its
// highest-priority waiter; EPERM when not held. It never blocks and
// allocates only on error.
func FutexUnlockPI(addr *uint32) error {
	_, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexUnlockPI, 0, 0, 0, 0)
	if e != 0 {
		return os.NewSyscallError("futex_unlock_pi", e)
	}
	return nil
}
