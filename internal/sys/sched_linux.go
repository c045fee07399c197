package sys

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Gettid returns the calling thread's kernel thread id. The result only
// stays meaningful while the goroutine is locked to its thread.
//
// RT-safe.
func Gettid() int { return unix.Gettid() }

// SetScheduler sets the policy and priority of thread tid (0: the calling
// thread) with sched_setattr. For SchedOther the priority must be 0 and
// nice stays as it is.
func SetScheduler(tid int, policy Policy, prio int) error {
	attr := unix.SchedAttr{
		Size:     unix.SizeofSchedAttr,
		Policy:   uint32(policy),
		Priority: uint32(prio),
	}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		return os.NewSyscallError("sched_setattr", err)
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
// SCHED_FIFO, the way LinuxCNC's detection does it: it sets the lowest
// FIFO priority on a locked thread, then restores the thread's previous
// policy. The error is the kernel's answer (errors.Is(err, unix.EPERM)
// without CAP_SYS_NICE or RLIMIT_RTPRIO, or when RT group scheduling
// leaves the cgroup no RT budget).
func ProbeSchedFIFO() error {
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
		if err := SetScheduler(0, SchedFIFO, FIFOPrioMin); err != nil {
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
