package sys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime reads a CPU-time clock in nanoseconds, or -1 when it
// cannot (the thread is gone). It keeps the P and does not allocate.
// RT-safe.
func ThreadCPUTime(clock int32) int64 {
	var ts unix.Timespec
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return -1
	}
	return ts.Nano()
}

// ThreadClock is the CPU-time clock of thread tid, for ThreadCPUTime
// (pthread_getcpuclockid's encoding: CPUCLOCK_SCHED, per thread).
func ThreadClock(tid int) int32 { return (^int32(tid))<<3 | 6 }

// ProcessClock is the whole process's CPU-time clock, for ThreadCPUTime.
const ProcessClock int32 = unix.CLOCK_PROCESS_CPUTIME_ID
