package sys

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Nanotime returns CLOCK_MONOTONIC in nanoseconds, read as the Go runtime
// reads it (vDSO): the clock of every gortapi deadline.
// RT-safe.
func Nanotime() int64 { return nanotime() }

//go:linkname nanotime runtime.nanotime
//go:noescape
func nanotime() int64

// Timespec converts nanoseconds to a unix.Timespec, saturating on 32-bit
// Linux beyond 68 years.
// RT-safe.
func Timespec(ns int64) unix.Timespec {
	sec, nsec := ns/1e9, ns%1e9
	if sec > maxTimespecSec {
		sec, nsec = maxTimespecSec, 1e9-1
	}
	return unix.Timespec{Sec: timespecField(sec), Nsec: timespecField(nsec)}
}

// SleepUntil sleeps until the absolute deadline on Nanotime's clock. A
// signal restarts the sleep with the same deadline, so wake-ups never
// drift. The goroutine is in a system call meanwhile: a stop-the-world
// does not wait for it, and its P stays its own unless the scheduler
// takes it (then the wake-up takes an idle one).
// RT-safe.
func SleepUntil(deadline int64) error {
	ts := Timespec(deadline)
	for {
		_, _, errno := unix.Syscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
			unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
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

// errSleep is out of line to keep the sleep loop small.
//
//go:noinline
func errSleep(errno unix.Errno) error {
	return os.NewSyscallError("clock_nanosleep", errno)
}
