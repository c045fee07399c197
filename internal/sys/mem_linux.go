package sys

import (
	"os"

	"golang.org/x/sys/unix"
)

// LockMemory locks every present and future page of the process in RAM
// (mlockall(MCL_CURRENT|MCL_FUTURE)), so that a real-time thread never
// takes a major page fault.
//
// Beware Go issue 28081: with MCL_FUTURE, heap growth past RLIMIT_MEMLOCK
// makes the runtime die with "out of memory". Callers should only lock
// when the limit is unlimited or the process runs as root.
func LockMemory() error {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
		return os.NewSyscallError("mlockall", err)
	}
	return nil
}

// UnlockMemory undoes LockMemory.
func UnlockMemory() error {
	if err := unix.Munlockall(); err != nil {
		return os.NewSyscallError("munlockall", err)
	}
	return nil
}

// MemlockLimit returns the soft RLIMIT_MEMLOCK in bytes
// (unix.RLIM_INFINITY when unlimited).
func MemlockLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err != nil {
		return 0, os.NewSyscallError("getrlimit", err)
	}
	return lim.Cur, nil
}

// ThreadUsage is the part of getrusage(RUSAGE_THREAD) a real-time task
// cares about.
type ThreadUsage struct {
	MinorFaults         int64 // ru_minflt
	MajorFaults         int64 // ru_majflt
	VoluntarySwitches   int64 // ru_nvcsw: the thread blocked (sleeps count here)
	InvoluntarySwitches int64 // ru_nivcsw: the thread was preempted
}

// ReadThreadUsage fills u with the calling thread's resource usage.
// It makes one system call.
// RT-safe.
func ReadThreadUsage(u *ThreadUsage) error {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return errRusage(err)
	}
	u.MinorFaults = int64(ru.Minflt) // a 32-bit long on 32-bit Linux
	u.MajorFaults = int64(ru.Majflt)
	u.VoluntarySwitches = int64(ru.Nvcsw)
	u.InvoluntarySwitches = int64(ru.Nivcsw)
	return nil
}

//go:noinline
func errRusage(err error) error { return os.NewSyscallError("getrusage", err) }
