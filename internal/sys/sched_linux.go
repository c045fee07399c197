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

// Gettid returns the calling thread's kernel thread id. The result only
// stays meaningful while the goroutine is locked to its thread.
// RT-safe.
func Gettid() int { return unix.Gettid() }

// SetScheduler sets the policy and priority of thread tid (0: the calling
// thread). For SchedOther the priority must be 0. The thread's nice value
// is kept whatever the policy, so that a thread of a niced process handed
// back to SCHED_OTHER is still niced.
//
// It calls sched_setscheduler, not sched_setattr: the kernel fills in the
// old call's nice from the thread's own, where sched_setattr sets nice to
// attr.sched_nice (0 unless the caller read it first, which it cannot do
// for a SCHED_FIFO thread: sched_getattr reports nice 0 for it).
func SetScheduler(tid int, policy Policy, prio int) error {
	param := struct{ priority int32 }{int32(prio)}
	if prio < 0 || int(param.priority) != prio {
		return os.NewSyscallError("sched_setscheduler", unix.EINVAL)
	}
	if (policy == SchedFIFO || policy == SchedRR) && prio >= FIFOPrioMin && prio <= FIFOPrioMax && denyRealTime.Load() {
		// DenyRealTime; an invalid priority still gets the kernel's EINVAL
		return os.NewSyscallError("sched_setscheduler", unix.EPERM)
	}
	_, _, errno := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		return os.NewSyscallError("sched_setscheduler", errno)
	}
	return nil
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

// ProbeSchedFIFO tells whether this process may run threads under
// SCHED_FIFO at all: ProbeSchedFIFOAt(FIFOPrioMin), the way LinuxCNC's
// detection does it.
func ProbeSchedFIFO() error { return ProbeSchedFIFOAt(FIFOPrioMin) }

// ProbeSchedFIFOAt tells whether this process may run a thread under
// SCHED_FIFO at priority prio: it sets that priority on a locked thread,
// then restores the thread's previous policy (and keeps its nice). The
// error is the kernel's answer (errors.Is(err, unix.EPERM) without
// CAP_SYS_NICE, when prio is above RLIMIT_RTPRIO, or when RT group
// scheduling leaves the cgroup no RT budget).
func ProbeSchedFIFOAt(prio int) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is never handed back to the runtime: if restoring
		// the old policy failed, a SCHED_FIFO thread must not go on
		// running arbitrary goroutines. Exiting the goroutine while locked
		// makes the runtime destroy the thread.
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

// RTPrioLimit returns the soft RLIMIT_RTPRIO: the highest real-time
// priority a process without CAP_SYS_NICE may set.
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

// AllowedCPUs returns the CPUs sched_setaffinity may place this process's
// threads on, in ascending order: its cpuset (the cgroup's, or all online
// CPUs outside one). That is not the process's current affinity: a
// process started with taskset, or with the default affinity that
// isolcpus= leaves, may still pin a thread to an isolated CPU. The kernel
// is asked directly: a locked thread requests every CPU, reads back what
// it was granted, and gets its own affinity back.
func AllowedCPUs() ([]int, error) {
	type result struct {
		cpus []int
		err  error
	}
	res := make(chan result, 1)
	go func() {
		// The goroutine may run on any thread, the main one included:
		// the thread gets its affinity back before it is unlocked. If
		// that fails, the goroutine exits locked and the runtime
		// retires the thread.
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
