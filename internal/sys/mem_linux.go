package sys

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LockMemory locks the process's pages in RAM: those mapped now at once,
// later ones as first touched (MCL_FUTURE|MCL_ONFAULT; plain MCL_FUTURE
// before Linux 4.4), so that no mapping is faulted in whole under the
// memory-map lock (docs/GC.md, "Memory locked as it is touched").
// Lock only when RLIMIT_MEMLOCK is unlimited or as root: past the limit
// the Go heap dies with "out of memory" (Go issue 28081).
func LockMemory() error {
	if err := unix.Mlockall(unix.MCL_CURRENT); err != nil {
		return os.NewSyscallError("mlockall", err)
	}
	err := unix.Mlockall(unix.MCL_FUTURE | unix.MCL_ONFAULT)
	if err == unix.EINVAL { // before Linux 4.4
		err = unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE)
	}
	if err != nil {
		_ = unix.Munlockall()
		return os.NewSyscallError("mlockall", err)
	}
	return nil
}

// ResidentPages returns how many pages of b are in RAM (mincore).
func ResidentPages(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return 0, os.NewSyscallError("mincore", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, nil
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

// ThreadUsage is the part of getrusage(RUSAGE_THREAD) a task cares about.
type ThreadUsage struct {
	MinorFaults         int64 // ru_minflt
	MajorFaults         int64 // ru_majflt
	VoluntarySwitches   int64 // ru_nvcsw: the thread blocked (sleeps count here)
	InvoluntarySwitches int64 // ru_nivcsw: the thread was preempted
}

// ReadThreadUsage fills u with the calling thread's usage: one syscall.
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
