package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/gortapi/gortapi/internal/sys"
)

// background makes halweb give way to everything else on the machine:
// every thread of the process runs SCHED_IDLE (the threads the Go
// runtime makes later inherit it), and at most one thread runs Go code
// at once (GOMAXPROCS 1, unless $GOMAXPROCS is set), so that halweb and
// its garbage collector never hold every CPU of a small controller. The
// host's SCHED_FIFO threads preempt halweb anyway; this keeps it off
// what they depend on besides (the host's own garbage collector and
// command socket run SCHED_OTHER) and off the CPU they share.
func background() error {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	return eachThread(func(tid int) error { return sys.SetScheduler(tid, sys.SchedIdle, 0) })
}

// keepOff moves every thread of halweb off the CPUs that a real-time
// thread of process pid (the host) is pinned to, when CPUs of halweb's
// own remain. It returns the CPUs halweb now runs on, nil when it
// changed nothing: no such thread, or none pinned apart from halweb.
func keepOff(pid int) ([]int, error) {
	own, err := sys.Affinity(0)
	if err != nil {
		return nil, err
	}
	rt, err := realTimeCPUs(pid)
	if err != nil {
		return nil, err
	}
	cpus := cpusBesides(own, rt)
	if cpus == nil {
		return nil, nil
	}
	return cpus, eachThread(func(tid int) error { return sys.SetAffinity(tid, cpus) })
}

// realTimeCPUs lists the CPUs each SCHED_FIFO or SCHED_RR thread of
// process pid may run on.
func realTimeCPUs(pid int) ([][]int, error) {
	d, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	var out [][]int
	for _, e := range d {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		policy, _, err := sys.Scheduler(tid)
		if err != nil || policy != sys.SchedFIFO && policy != sys.SchedRR {
			continue // exited meanwhile, or not real-time
		}
		if cpus, err := sys.Affinity(tid); err == nil {
			out = append(out, cpus)
		}
	}
	return out, nil
}

// cpusBesides is own without the CPUs of each set of rt that leaves out
// some of own (a thread pinned apart; one that may run anywhere halweb
// may cannot be kept off). It is nil when that removes nothing or
// everything: halweb then stays where it is.
func cpusBesides(own []int, rt [][]int) []int {
	reserved := map[int]bool{}
	for _, set := range rt {
		spans := true
		for _, c := range own {
			spans = spans && slices.Contains(set, c)
		}
		if spans {
			continue
		}
		for _, c := range set {
			reserved[c] = true
		}
	}
	var out []int
	for _, c := range own {
		if !reserved[c] {
			out = append(out, c)
		}
	}
	if len(out) == 0 || len(out) == len(own) {
		return nil
	}
	return out
}

// eachThread calls f for every thread of this process, passes after
// passes until one finds no thread it has not seen (a thread made
// meanwhile by one not yet seen would not inherit f's change). A thread
// that exits meanwhile is skipped; f's first other error is returned.
func eachThread(f func(tid int) error) error {
	done := map[int]bool{}
	for range 8 {
		tids, err := sys.Threads()
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			done[tid], fresh = true, fresh+1
			if err := f(tid); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
	return nil
}
