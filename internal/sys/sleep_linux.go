package sys

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Private futex operations on a word of this process (the task's control
// word), cheaper for the kernel than the shared ones futex_linux.go uses.
const (
	futexPrivate          = 128 // FUTEX_PRIVATE_FLAG
	futexWaitBitsetPriv   = futexWaitBitset | futexPrivate
	futexWakePrivate      = futexWake | futexPrivate
	prSetTimerslack       = 29 // PR_SET_TIMERSLACK
	minimalTimerSlackNano = 1
)

// The futex word is an atomic.Uint32, whose address is that of its value
// (it holds nothing else but a zero-size marker).

// SleepUntilOr sleeps on CLOCK_MONOTONIC until the absolute deadline, like
// SleepUntil, unless *word is non-zero or becomes so and WakeSleeper(word)
// is called: then it returns interrupted=true at once. The test of *word
// and the sleep are one atomic step in the kernel (FUTEX_WAIT_BITSET with
// an absolute timeout, the same hrtimer clock_nanosleep arms), so a wake-up
// is never lost between them. Signals (Go's preemption) restart the sleep
// with the same deadline. raw keeps the P, as SleepUntilRaw.
// RT-safe.
func SleepUntilOr(deadline int64, word *atomic.Uint32, raw bool) (interrupted bool, err error) {
	ts := Timespec(deadline)
	for {
		var errno unix.Errno
		if raw {
			_, _, errno = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitsetPriv,
				0, uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAll)
		} else {
			_, _, errno = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitsetPriv,
				0, uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAll)
		}
		switch errno {
		case unix.ETIMEDOUT:
			return false, nil
		case 0, unix.EAGAIN, unix.EINTR:
			// Woken, the word changed, or a signal: look at the word.
			if word.Load() != 0 {
				return true, nil
			}
			if Nanotime() >= deadline {
				return false, nil
			}
		default:
			return false, errFutexSleep(errno)
		}
	}
}

// WakeSleeper wakes a SleepUntilOr waiting on word; the caller has made
// *word non-zero first. It never blocks and may be called from any
// goroutine.
func WakeSleeper(word *atomic.Uint32) {
	_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1, 0, 0, 0)
}

// SetMinimalTimerSlack sets the calling thread's timer slack to 1 ns
// (prctl PR_SET_TIMERSLACK), so that its futex sleeps end as precisely as
// clock_nanosleep, which older kernels exempt from the slack only for
// real-time threads.
func SetMinimalTimerSlack() error {
	if err := unix.Prctl(prSetTimerslack, minimalTimerSlackNano, 0, 0, 0); err != nil {
		return errPrctl(err)
	}
	return nil
}

//go:noinline
func errPrctl(err error) error { return os.NewSyscallError("prctl PR_SET_TIMERSLACK", err) }

// errFutexSleep is kept out of line, as errSleep: it only runs on a
// programming error (a deadline that is not a valid timespec).
//
//go:noinline
func errFutexSleep(errno unix.Errno) error { return os.NewSyscallError("futex_wait", errno) }

// SleepRawOnceOr is one raw sleep until the absolute deadline, as
// SleepRawOnce makes, that also ends when *word is non-zero and woken
// (WakeSleeper): woken reports that, signalled that a signal ended it
// first. Neither, without an error, means the deadline passed or a
// spurious wake-up: the caller looks at the clock. word may be nil: then
// it is SleepRawOnce.
// RT-safe.
func SleepRawOnceOr(deadline int64, word *atomic.Uint32) (woken, signalled bool, err error) {
	if word == nil {
		signalled, err = SleepRawOnce(deadline)
		return false, signalled, err
	}
	ts := Timespec(deadline)
	_, _, errno := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitsetPriv,
		0, uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAll)
	switch errno {
	case unix.ETIMEDOUT:
		return false, false, nil
	case 0, unix.EAGAIN:
		return word.Load() != 0, false, nil
	case unix.EINTR:
		return word.Load() != 0, true, nil
	}
	return false, false, errFutexSleep(errno)
}
