package sys

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Threads lists the kernel thread ids of this process (/proc/self/task).
// It allocates.
func Threads() ([]int, error) {
	d, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(d))
	for _, e := range d {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// Gettid returns the calling thread's kernel thread id, meaningful while
// the goroutine is locked to its thread.
// RT-safe.
func Gettid() int { return unix.Gettid() }

// SetScheduler sets the policy and priority of thread tid (0: the calling
// thread), reset on fork (ResetOnFork): a process or thread it makes
// starts SCHED_OTHER, so that no child of the program inherits a real-time
// policy it set; SchedOther takes priority 0. The thread's nice value is
// kept: hence sched_setscheduler, as sched_setattr would reset it (and
// sched_getattr reports nice 0 for a SCHED_FIFO thread).
func SetScheduler(tid int, policy Policy, prio int) error {
	policy |= ResetOnFork // never cleared: without CAP_SYS_NICE that is EPERM
	param := struct{ priority int32 }{int32(prio)}
	if prio < 0 || int(param.priority) != prio {
		return os.NewSyscallError("sched_setscheduler", unix.EINVAL)
	}
	if base := policy &^ ResetOnFork; (base == SchedFIFO || base == SchedRR) && prio >= FIFOPrioMin && prio <= FIFOPrioMax && denyRealTime.Load() {
		// an invalid priority still gets the kernel's EINVAL
		return os.NewSyscallError("sched_setscheduler", unix.EPERM)
	}
	_, _, errno := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	return syscallErr("sched_setscheduler", errno)
}

// SetSchedulerRaw sets the policy and priority of thread tid (0: the
// calling thread) with one raw system call and returns its errno. Unlike
// SetScheduler it adds no flag (policy carries ResetOnFork when wanted),
// and the Go runtime does not see the call: the calling goroutine keeps
// its P and never passes exitsyscall.
// RT-safe.
func SetSchedulerRaw(tid int, policy Policy, prio int) unix.Errno {
	param := struct{ priority int32 }{int32(prio)}
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	return errno
}

// SetSelfSchedulerRaw is SetScheduler(0, policy, prio) as one
// SetSchedulerRaw, and reports whether the kernel took it: the wake-up
// ceiling's call, where passing exitsyscall again would let a thread of
// lower priority hold the caller up (docs/GC.md, "The wake-up ceiling").
// RT-safe.
func SetSelfSchedulerRaw(policy Policy, prio int) bool {
	if base := policy &^ ResetOnFork; (base == SchedFIFO || base == SchedRR) && denyRealTime.Load() {
		return false
	}
	return SetSchedulerRaw(0, policy|ResetOnFork, prio) == 0
}

// Scheduler reports the policy and priority of thread tid (0: the calling
// thread).
func Scheduler(tid int) (Policy, int, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, 0, os.NewSyscallError("sched_getattr", err)
	}
	return Policy(attr.Policy), int(attr.Priority), nil
}

// ProbeSchedFIFO is ProbeSchedFIFOAt(FIFOPrioMin), as LinuxCNC probes.
func ProbeSchedFIFO() error { return ProbeSchedFIFOAt(FIFOPrioMin) }

// ProbeSchedFIFOAt tells whether this process may run a thread under
// SCHED_FIFO at prio, by setting it on a locked thread and restoring it.
// The error is the kernel's: EPERM without CAP_SYS_NICE, above
// RLIMIT_RTPRIO, or when the cgroup has no RT budget.
func ProbeSchedFIFOAt(prio int) error {
	errc := make(chan error, 1)
	go func() {
		// On failure the goroutine exits locked, and the runtime destroys
		// the thread rather than run goroutines on it at SCHED_FIFO.
		runtime.LockOSThread()
		oldPolicy, oldPrio, err := Scheduler(0)
		if err != nil {
			errc <- err
			return
		}
		if err := SetScheduler(0, SchedFIFO, prio); err != nil {
			errc <- err
			return
		}
		if err := SetScheduler(0, oldPolicy, oldPrio); err != nil {
			errc <- fmt.Errorf("restore %v after probe: %w", oldPolicy, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	return <-errc
}

// RTPrioLimit returns the soft RLIMIT_RTPRIO.
func RTPrioLimit() (uint64, error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim); err != nil {
		return 0, os.NewSyscallError("getrlimit", err)
	}
	return lim.Cur, nil
}

// SetAffinity pins thread tid (0: the calling thread) to the given CPUs.
func SetAffinity(tid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= cpuSetSize {
			return fmt.Errorf("sched_setaffinity: cpu %d out of range: %w", c, unix.EINVAL)
		}
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		return os.NewSyscallError("sched_setaffinity", err)
	}
	return nil
}

// Affinity returns the CPUs thread tid (0: the calling thread) may run on,
// in ascending order.
func Affinity(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, os.NewSyscallError("sched_getaffinity", err)
	}
	var cpus []int
	for c := 0; c < cpuSetSize; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// AllowedCPUs returns, in ascending order, the CPUs this process's threads
// may be pinned to: its cpuset, which may include CPUs outside its current
// affinity (taskset, isolcpus=). A locked thread asks for every CPU, reads
// back what it got, and gets its own affinity back.
func AllowedCPUs() ([]int, error) {
	type result struct {
		cpus []int
		err  error
	}
	res := make(chan result, 1)
	go func() {
		// If restoring the affinity fails, the goroutine exits locked and
		// the runtime retires the thread.
		runtime.LockOSThread()
		var old, all unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			runtime.UnlockOSThread()
			res <- result{err: os.NewSyscallError("sched_getaffinity", err)}
			return
		}
		for c := 0; c < len(all)*64; c++ {
			all.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &all); err != nil {
			runtime.UnlockOSThread()
			res <- result{err: os.NewSyscallError("sched_setaffinity", err)}
			return
		}
		cpus, err := Affinity(0)
		if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
			res <- result{err: fmt.Errorf("restore the affinity after reading the cpuset: %w",
				os.NewSyscallError("sched_setaffinity", rerr))}
			return
		}
		runtime.UnlockOSThread()
		res <- result{cpus, err}
	}()
	r := <-res
	return r.cpus, r.err
}
