package sys

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Nanotime returns CLOCK_MONOTONIC in nanoseconds, read through the vDSO
// exactly as the Go runtime reads it. It is the clock every gortapi
// deadline is expressed in. It makes no system call where the hardware
// has a vDSO clock.
// RT-safe.
func Nanotime() int64 { return nanotime() }

//go:linkname nanotime runtime.nanotime
//go:noescape
func nanotime() int64

// Timespec converts nanoseconds to a unix.Timespec. On 32-bit Linux,
// whose timespec holds 32-bit seconds, a time more than 68 years ahead
// saturates to the largest one the kernel accepts.
// RT-safe.
func Timespec(ns int64) unix.Timespec {
	sec, nsec := ns/1e9, ns%1e9
	if sec > maxTimespecSec {
		sec, nsec = maxTimespecSec, 1e9-1
	}
	return unix.Timespec{Sec: timespecField(sec), Nsec: timespecField(nsec)}
}

// SleepUntil sleeps on CLOCK_MONOTONIC until the absolute deadline (in
// Nanotime's nanoseconds). An interruption by a signal restarts the sleep
// with the same deadline, so the wake-up time never drifts.
//
// The call goes through the Go runtime's syscall path: the thread's P may
// be handed to another goroutine while it sleeps and must be reacquired on
// wake-up. SleepUntilRaw keeps the P instead.
// RT-safe.
func SleepUntil(deadline int64) error { return sleepUntil(deadline, false) }

// SleepUntilRaw is SleepUntil through RawSyscall: the calling thread keeps
// its P while it sleeps, so waking up never waits for one, at the price of
// delaying a stop-the-world of the whole process until the sleep ends.
// RT-safe.
func SleepUntilRaw(deadline int64) error { return sleepUntil(deadline, true) }

// SleepRawOnce is one raw absolute sleep, as SleepUntilRaw makes, that
// does not restart after a signal: interrupted reports that a signal
// ended it before the deadline. The Go runtime asks a goroutine that has
// kept its P for 10 ms to yield with a signal (SIGURG) to its thread; a
// raw sleeper that learns of it here can yield at once, while it has time
// to spare, rather than at its next function call after the wake-up.
// RT-safe.
func SleepRawOnce(deadline int64) (interrupted bool, err error) {
	ts := Timespec(deadline)
	_, _, errno := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
		unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	switch errno {
	case 0:
		return false, nil
	case unix.EINTR:
		return true, nil
	}
	return false, errSleep(errno)
}

func sleepUntil(deadline int64, raw bool) error {
	ts := Timespec(deadline)
	for {
		var errno unix.Errno
		if raw {
			_, _, errno = unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
				unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		} else {
			_, _, errno = unix.Syscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
				unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		}
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		default:
			return errSleep(errno)
		}
	}
}

// errSleep is kept out of line so the sleeping loops stay small; it only
// runs on a programming error (a deadline that is not a valid timespec).
//
//go:noinline
func errSleep(errno unix.Errno) error {
	return os.NewSyscallError("clock_nanosleep", errno)
}
