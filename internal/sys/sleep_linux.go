package sys

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Private futex operations, on a task's control word.
const (
	futexPrivate          = 128 // FUTEX_PRIVATE_FLAG
	futexWaitBitsetPriv   = futexWaitBitset | futexPrivate
	futexWakePrivate      = futexWake | futexPrivate
	prSetTimerslack       = 29 // PR_SET_TIMERSLACK
	minimalTimerSlackNano = 1
)

// SleepUntilOr is SleepUntil that returns interrupted=true at once when
// *word is non-zero, or becomes so and WakeSleeper(word) is called; no
// wake-up is lost (the test and the sleep are one futex wait). Signals
// restart the sleep with the same deadline. It is a system call, as
// SleepUntil's.
// RT-safe.
func SleepUntilOr(deadline int64, word *atomic.Uint32) (interrupted bool, err error) {
	ts := Timespec(deadline)
	for {
		_, _, errno := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitsetPriv,
			0, uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAll)
		switch errno {
		case unix.ETIMEDOUT:
			return false, nil
		case 0, unix.EAGAIN, unix.EINTR:
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

// WakeSleeper wakes a SleepUntilOr on word, which the caller made
// non-zero first. It never blocks; any goroutine may call it.
func WakeSleeper(word *atomic.Uint32) {
	_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1, 0, 0, 0)
}

// SetMinimalTimerSlack sets the calling thread's timer slack to 1 ns, so
// that its futex sleeps end as precisely as clock_nanosleep.
func SetMinimalTimerSlack() error {
	if err := unix.Prctl(prSetTimerslack, minimalTimerSlackNano, 0, 0, 0); err != nil {
		return errPrctl(err)
	}
	return nil
}

//go:noinline
func errPrctl(err error) error { return os.NewSyscallError("prctl PR_SET_TIMERSLACK", err) }

//go:noinline
func errFutexSleep(errno unix.Errno) error { return os.NewSyscallError("futex_wait", errno) }
