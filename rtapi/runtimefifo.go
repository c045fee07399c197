package rtapi

import (
	"sync"

	"github.com/gortapi/gortapi/internal/sys"
)

// Runtime threads at SCHED_FIFO 1 (Options.RuntimeFIFO): while a counted
// task runs, every thread of the process that is not a task's runs at
// the lowest real-time priority, above every SCHED_OTHER thread of the
// machine and below every task. A task goroutine that the Go scheduler
// deschedules (sysmon's forced preemption, a stop-the-world) gets its P
// back only from another thread of the runtime; at SCHED_OTHER that
// thread waits behind the machine's CPU load (docs/GC.md, "What still
// makes a wake-up late by more than 20 ms"). Threads the runtime makes
// later inherit the priority of the thread that makes them.

// fifoBoard counts the tasks that asked for it and knows their threads.
// There is one for the process (runtimeFIFO): the threads are the
// process's.
type fifoBoard struct {
	mu    sync.Mutex
	tasks map[int]bool // task thread ids counted and not ended
	// set and get are sys.SetScheduler and sys.Scheduler; threads lists
	// the process's thread ids.
	set     func(tid int, p sys.Policy, prio int) error
	get     func(tid int) (sys.Policy, int, error)
	threads func() ([]int, error)
}

var runtimeFIFO = fifoBoard{set: sys.SetScheduler, get: sys.Scheduler, threads: sys.Threads}

// add counts the task on thread tid; the first one raises every
// SCHED_OTHER thread of the process to SCHED_FIFO 1. It returns the first
// error, with the threads it could raise raised.
func (b *fifoBoard) add(tid int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tasks == nil {
		b.tasks = make(map[int]bool)
	}
	b.tasks[tid] = true
	if len(b.tasks) > 1 {
		return nil
	}
	var first error
	err := b.settle(func(t int) bool {
		if p, _, err := b.get(t); err != nil || p != sys.SchedOther {
			return false // gone, or a task's or the watchdog's
		}
		if err := b.set(t, sys.SchedFIFO, 1); err != nil {
			if first == nil {
				first = err
			}
			return false
		}
		return true
	})
	if first == nil {
		first = err
	}
	return first
}

// settlePasses bounds settle's passes over the process's threads.
const settlePasses = 8

// settle applies change to every thread of the process, again while a
// pass changed one: a thread made during a pass by a thread not yet
// changed inherits the old policy, and only a pass that changes nothing
// shows that every thread that can make one has the new.
func (b *fifoBoard) settle(change func(tid int) bool) error {
	for range settlePasses {
		tids, err := b.threads()
		if err != nil {
			return err
		}
		changed := false
		for _, t := range tids {
			if change(t) {
				changed = true
			}
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// remove uncounts the task on thread tid (already off SCHED_FIFO, or
// ending); the last one gives every thread of the process at SCHED_FIFO
// 1 that is not a counted task's SCHED_OTHER back.
func (b *fifoBoard) remove(tid int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.tasks[tid] {
		return
	}
	delete(b.tasks, tid)
	if len(b.tasks) > 0 {
		return
	}
	_ = b.settle(func(t int) bool {
		if p, prio, err := b.get(t); err != nil || p != sys.SchedFIFO || prio != 1 || b.tasks[t] {
			return false
		}
		return b.set(t, sys.SchedOther, 0) == nil
	})
}

// wantRuntimeFIFO reports whether a task starting on rt counts on the
// board: Options.RuntimeFIFO On, on a real-time flavor with OS threads.
func (rt *RT) wantRuntimeFIFO() bool {
	return rt.opts.RuntimeFIFO == On && rt.traits.OSThreads && rt.info.RealTime
}
