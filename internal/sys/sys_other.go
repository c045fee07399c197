//go:build !linux

package sys

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Elsewhere than Linux every call fails with errors.ErrUnsupported;
// Nanotime still reads a monotonic clock.
var errUnsupported = fmt.Errorf("needs Linux: %w", errors.ErrUnsupported)

var monoBase = time.Now()

// Nanotime reads a monotonic clock in nanoseconds.
// RT-safe.
func Nanotime() int64 { return int64(time.Since(monoBase)) }

// Threads fails: there are no kernel thread ids here.
func Threads() ([]int, error) { return nil, errUnsupported }

// Gettid returns 0: there are no kernel thread ids here.
func Gettid() int { return 0 }

// SetScheduler fails: scheduling policies need Linux.
func SetScheduler(tid int, policy Policy, prio int) error { return errUnsupported }

// SetSelfSchedulerRaw reports false: scheduling policies need Linux.
func SetSelfSchedulerRaw(policy Policy, prio int) bool { return false }

// Scheduler fails: scheduling policies need Linux.
func Scheduler(tid int) (Policy, int, error) { return 0, 0, errUnsupported }

// ProbeSchedFIFO fails: SCHED_FIFO needs Linux.
func ProbeSchedFIFO() error { return errUnsupported }

// ProbeSchedFIFOAt fails: SCHED_FIFO needs Linux.
func ProbeSchedFIFOAt(prio int) error { return errUnsupported }

// RTPrioLimit fails: RLIMIT_RTPRIO is read on Linux only.
func RTPrioLimit() (uint64, error) { return 0, errUnsupported }

// SetAffinity fails: affinity needs Linux.
func SetAffinity(tid int, cpus []int) error { return errUnsupported }

// Affinity fails: affinity needs Linux.
func Affinity(tid int) ([]int, error) { return nil, errUnsupported }

// AllowedCPUs fails: cpusets need Linux.
func AllowedCPUs() ([]int, error) { return nil, errUnsupported }

// SleepUntil fails: absolute sleeps on CLOCK_MONOTONIC need Linux.
func SleepUntil(deadline int64) error { return errUnsupported }

// LockMemory fails: mlockall needs Linux.
func LockMemory() error { return errUnsupported }

// UnlockMemory fails: munlockall needs Linux.
func UnlockMemory() error { return errUnsupported }

// LockedMemory fails: VmLck is read on Linux only.
func LockedMemory() (int64, error) { return 0, errUnsupported }

// MemlockLimit fails: RLIMIT_MEMLOCK is read on Linux only.
func MemlockLimit() (uint64, error) { return 0, errUnsupported }

// ThreadUsage is the part of getrusage(RUSAGE_THREAD) a task cares about.
type ThreadUsage struct {
	MinorFaults         int64
	MajorFaults         int64
	VoluntarySwitches   int64
	InvoluntarySwitches int64
}

// ReadThreadUsage fails: per-thread usage needs Linux.
// RT-safe.
func ReadThreadUsage(u *ThreadUsage) error { return errUnsupported }

// PosixTimer is a periodic POSIX timer aimed at one thread (Linux only).
type PosixTimer struct{}

// NewPosixTimer fails: SIGEV_THREAD_ID needs Linux.
func NewPosixTimer(sig int) (*PosixTimer, error) { return nil, errUnsupported }

// Fire fails.
func (t *PosixTimer) Fire() error { return errUnsupported }

// Fire fails.
func (t *Timerfd) Fire() error { return errUnsupported }

// Arm fails. Disarm, Wait and Close too.
func (t *PosixTimer) Arm(first, period int64) error { return errUnsupported }
func (t *PosixTimer) Disarm() error                 { return errUnsupported }
func (t *PosixTimer) Wait() (uint64, error)         { return 0, errUnsupported }
func (t *PosixTimer) Close() error                  { return nil }

// Timerfd is a periodic timer read through a file descriptor (Linux only).
type Timerfd struct{}

// NewTimerfd fails: timerfd needs Linux.
func NewTimerfd() (*Timerfd, error) { return nil, errUnsupported }

// Arm fails. Disarm, Wait and Close too.
func (t *Timerfd) Arm(first, period int64) error { return errUnsupported }
func (t *Timerfd) Disarm() error                 { return errUnsupported }
func (t *Timerfd) Wait() (uint64, error)         { return 0, errUnsupported }
func (t *Timerfd) Close() error                  { return nil }

// FutexWait fails: futexes need Linux.
func FutexWait(addr *uint32, val uint32, timeoutNs int64) (woken bool, err error) {
	return false, errUnsupported
}

// FutexWaitUntil fails: futexes need Linux.
func FutexWaitUntil(addr *uint32, val uint32, deadlineNs int64) (woken bool, err error) {
	return false, errUnsupported
}

// FutexWake fails: futexes need Linux.
func FutexWake(addr *uint32, n int) (int, error) { return 0, errUnsupported }

// ThreadCPUTime returns -1: per-thread CPU clocks are read on Linux only.
func ThreadCPUTime(clock int32) int64 { return -1 }

// ThreadClock is the CPU-time clock of thread tid, for ThreadCPUTime.
func ThreadClock(tid int) int32 { return (^int32(tid))<<3 | 6 }

// ProcessClock is the whole process's CPU-time clock, for ThreadCPUTime.
const ProcessClock int32 = 2

// SleepUntilOr fails: futex sleeps need Linux.
func SleepUntilOr(deadline int64, word *atomic.Uint32) (bool, error) {
	return false, errUnsupported
}

// WakeSleeper does nothing here.
func WakeSleeper(word *atomic.Uint32) {}

// SetMinimalTimerSlack fails: timer slack is a Linux setting.
func SetMinimalTimerSlack() error { return errUnsupported }

// PI futex word bits, as on Linux.
const (
	FutexWaiters   = 0x80000000
	FutexOwnerDied = 0x40000000
	FutexTIDMask   = 0x3fffffff
)

// FutexLockPI fails: priority-inheritance futexes need Linux.
func FutexLockPI(addr *uint32, deadlineNs int64) error { return errUnsupported }

// FutexUnlockPI fails: priority-inheritance futexes need Linux.
func FutexUnlockPI(addr *uint32) error { return errUnsupported }

// Read fails: /proc/stat is Linux's.
func (c *CPUAccounts) Read(into []CPUAccount) ([]CPUAccount, int64, error) {
	return into[:0], 0, errUnsupported
}

// Close does nothing.
func (c *CPUAccounts) Close() error { return nil }
