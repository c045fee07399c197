package sys

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Futex operations used by gortapi. The words live in shared memory that
// several processes map, so the PRIVATE flag is never set.
const (
	futexWait       = 0 // FUTEX_WAIT
	futexWake       = 1 // FUTEX_WAKE
	futexWaitBitset = 9 // FUTEX_WAIT_BITSET
	futexBitsetAll  = 0xffffffff
)

// FutexWait blocks while *addr == val, for at most timeoutNs nanoseconds
// (relative; timeoutNs <= 0 waits without a limit).
//
// It returns woken=true when the caller should re-check its condition: a
// FUTEX_WAKE arrived, *addr no longer held val (EAGAIN), or a signal
// interrupted the wait (EINTR; Go's async preemption sends SIGURG, so this is
// common and never an error). It returns woken=false, err=nil when the
// timeout expired. Any other errno (EFAULT, EINVAL) is returned as an
// *os.SyscallError so errors.Is(err, unix.EFAULT) works.
//
// FutexWait blocks: never call it from a real-time task body that must not
// sleep. It does not allocate unless it returns an error.
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

// FutexWaitUntil is FutexWait with an absolute CLOCK_MONOTONIC deadline in
// nanoseconds, the clock of Nanotime (FUTEX_WAIT_BITSET). A deadline already in the past returns
// woken=false at once. EINTR is reported as woken=true; the caller re-checks
// and calls again with the same deadline.
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

// FutexWake wakes at most n waiters blocked in FutexWait on addr and returns
// how many it woke. It never blocks, so it may be called from a real-time
// task body; it is a raw system call (the goroutine keeps its P) and does not
// allocate unless it returns an error.
func FutexWake(addr *uint32, n int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake,
		uintptr(n), 0, 0, 0)
	if e != 0 {
		return 0, os.NewSyscallError("futex_wake", e)
	}
	return int(r), nil
}
