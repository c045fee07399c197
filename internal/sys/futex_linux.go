package sys

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations on words in shared memory: never FUTEX_PRIVATE_FLAG.
const (
	futexWait       = 0 // FUTEX_WAIT
	futexWake       = 1 // FUTEX_WAKE
	futexWaitBitset = 9 // FUTEX_WAIT_BITSET
	futexBitsetAll  = 0xffffffff
)

// FutexWait blocks while *addr == val, for at most timeoutNs nanoseconds
// (relative; <= 0: no limit). It returns woken=true when the caller should
// re-check: a wake, *addr != val (EAGAIN) or a signal (EINTR, common under
// Go's preemption). woken=false, err=nil means the timeout expired. Other
// errnos (EFAULT, EINVAL) are errors. It allocates only on error.
func FutexWait(addr *uint32, val uint32, timeoutNs int64) (woken bool, err error) {
	var tsp unsafe.Pointer
	var ts unix.Timespec
	if timeoutNs > 0 {
		ts = Timespec(timeoutNs)
		tsp = unsafe.Pointer(&ts)
	}
	_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait,
		uintptr(val), uintptr(tsp), 0, 0)
	return futexWaitResult(e)
}

// FutexWaitUntil is FutexWait with an absolute deadline on Nanotime's
// clock; a past one returns woken=false at once. After EINTR (woken=true)
// the caller re-checks and calls again with the same deadline.
func FutexWaitUntil(addr *uint32, val uint32, deadlineNs int64) (woken bool, err error) {
	ts := Timespec(deadlineNs)
	_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitBitset,
		uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAll)
	return futexWaitResult(e)
}

func futexWaitResult(e unix.Errno) (bool, error) {
	switch e {
	case 0, unix.EAGAIN, unix.EINTR:
		return true, nil
	case unix.ETIMEDOUT:
		return false, nil
	default:
		return false, os.NewSyscallError("futex_wait", e)
	}
}

// FutexWake wakes at most n waiters of FutexWait on addr and returns how
// many it woke. It never blocks, keeps the P and allocates only on error.
func FutexWake(addr *uint32, n int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake,
		uintptr(n), 0, 0, 0)
	if e != 0 {
		return 0, os.NewSyscallError("futex_wake", e)
	}
	return int(r), nil
}
