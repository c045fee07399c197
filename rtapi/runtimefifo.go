package rtapi

import (
	"sync"
	"time"

	"go.uber.org/zap"

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
//
// Auto adds a valve: a program whose other threads keep a CPU busy at
// FIFO 1 would keep the machine's ordinary processes off it, and spend
// the CPU's real-time budget that its tasks share. When those threads
// use valveShare of a CPU over valveWindow, the board gives them
// SCHED_OTHER back, says so, and raises them again only for the next
// set of tasks.

// The valve: checked every valveTick over the last valveTicks ticks.
const (
	valveTick  = 100 * time.Millisecond
	valveTicks = 5
	valveShare = 0.8 // of one CPU
)

// fifoBoard counts the tasks that asked for it and knows their threads.
// There is one for the process (runtimeFIFO): the threads are the
// process's.
type fifoBoard struct {
	mu     sync.Mutex
	tasks  map[int]int64 // task thread ids counted and not ended: their CPU time when counted
	forced int           // counted tasks with RuntimeFIFO On: the valve is shut
	// gone is the CPU time the ended counted tasks used while counted,
	// so that other() stays steady as tasks come and go.
	gone    int64
	samples [valveTicks + 1]int64 // other() at the last ticks, a ring
	ticks   int
	tripped bool          // the valve gave the threads back; no raise until the last task ends
	stop    chan struct{} // closed to end the valve's ticker
	log     *zap.Logger
	every   time.Duration // the valve's tick; 0: no ticker (tests call check)
	// set and get are sys.SetScheduler and sys.Scheduler; threads lists
	// the process's thread ids; cpu is sys.ThreadCPUTime.
	set     func(tid int, p sys.Policy, prio int) error
	get     func(tid int) (sys.Policy, int, error)
	threads func() ([]int, error)
	cpu     func(clock int32) int64
}

var runtimeFIFO = fifoBoard{set: sys.SetScheduler, get: sys.Scheduler, threads: sys.Threads, cpu: sys.ThreadCPUTime, every: valveTick}

// add counts the task on thread tid; the first one raises every
// SCHED_OTHER thread of the process to SCHED_FIFO 1. forced (RuntimeFIFO
// On) shuts the valve while the task counts; otherwise the first task
// starts it, with log for its warning. It returns the first error, with
// the threads it could raise raised.
func (b *fifoBoard) add(tid int, forced bool, log *zap.Logger) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tasks == nil {
		b.tasks = make(map[int]int64)
	}
	if _, ok := b.tasks[tid]; ok {
		return nil
	}
	b.tasks[tid] = b.cpu(sys.ThreadClock(tid))
	if forced {
		b.forced++
	}
	b.log = log
	if b.stop == nil && b.every > 0 {
		b.stop = make(chan struct{})
		go b.tick(b.stop)
	}
	if len(b.tasks) > 1 {
		if forced && b.tripped {
			b.tripped = false
			return b.raise()
		}
		return nil
	}
	return b.raise()
}

// raise sets every SCHED_OTHER thread of the process to SCHED_FIFO 1.
// Under mu.
func (b *fifoBoard) raise() error {
	var first error
	err := b.settle(func(t int) bool {
		if _, task := b.tasks[t]; task {
			return false // a counted task's: the guard or the watchdog may have demoted it
		}
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

// lower gives every thread at SCHED_FIFO 1 that is not a counted task's
// SCHED_OTHER back. Under mu.
func (b *fifoBoard) lower() {
	_ = b.settle(func(t int) bool {
		if p, prio, err := b.get(t); err != nil || p != sys.SchedFIFO || prio != 1 {
			return false
		}
		if _, task := b.tasks[t]; task {
			return false
		}
		return b.set(t, sys.SchedOther, 0) == nil
	})
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
// ending; called from its own thread, which is still there to read);
// the last one gives back every thread of the process at SCHED_FIFO 1
// that is not a counted task's, and stops the valve.
func (b *fifoBoard) remove(tid int, forced bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	base, ok := b.tasks[tid]
	if !ok {
		return
	}
	if c := b.cpu(sys.ThreadClock(tid)); c >= 0 && base >= 0 {
		b.gone += c - base
	}
	delete(b.tasks, tid)
	if forced {
		b.forced--
	}
	if len(b.tasks) > 0 {
		return
	}
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
	b.tripped, b.gone, b.ticks = false, 0, 0
	b.lower()
}

// other is the CPU time, in ns, that the process's threads other than
// the counted tasks have used: the process's, less what the counted
// tasks used while counted. It is -1 when a clock cannot be read. Under
// mu.
func (b *fifoBoard) other() int64 {
	all := b.cpu(sys.ProcessClock)
	if all < 0 {
		return -1
	}
	all -= b.gone
	for tid, base := range b.tasks {
		c := b.cpu(sys.ThreadClock(tid))
		if c < 0 || base < 0 {
			return -1
		}
		all -= c - base
	}
	return all
}

// check is the valve's tick: it samples other() and, while the valve is
// open and the threads raised, gives them SCHED_OTHER back once they
// used valveShare of a CPU over the last valveTicks ticks. It reports
// whether it did.
func (b *fifoBoard) check() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.other()
	if o < 0 || len(b.tasks) == 0 {
		b.ticks = 0
		return false
	}
	b.samples[b.ticks%len(b.samples)] = o
	b.ticks++
	if b.ticks < len(b.samples) || b.tripped || b.forced > 0 {
		return false
	}
	used := o - b.samples[b.ticks%len(b.samples)]
	if float64(used) < valveShare*float64(valveTicks*valveTick) {
		return false
	}
	b.tripped = true
	b.lower()
	if b.log != nil {
		b.log.Warn("runtime threads back to SCHED_OTHER: the program kept a CPU busy at SCHED_FIFO 1, which would keep ordinary processes off it (Options.RuntimeFIFO on keeps them at 1)",
			zap.Duration("cpu", time.Duration(used)), zap.Duration("over", valveTicks*valveTick))
	}
	return true
}

// reraise raises threads made since the last pass: a thread made by a
// task's thread (reset on fork) or by the runtime's template thread
// made by one starts SCHED_OTHER. Not after the valve tripped.
func (b *fifoBoard) reraise() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.tasks) > 0 && !b.tripped {
		_ = b.raise()
	}
}

// tick runs check, and reraise, every b.every until stop is closed.
func (b *fifoBoard) tick(stop <-chan struct{}) {
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if !b.check() {
				b.reraise()
			}
		}
	}
}

// runtimeFIFO reports whether a task starting on rt with policy p counts
// on the board, and whether it forces it (Options.RuntimeFIFO On): On,
// or Auto for a SCHED_FIFO or SCHED_RR task, on a real-time flavor with
// OS threads.
func (rt *RT) runtimeFIFO(p sys.Policy) (count, forced bool) {
	if !rt.traits.OSThreads || !rt.info.RealTime {
		return false, false
	}
	switch rt.opts.RuntimeFIFO {
	case On:
		return true, true
	case Auto:
		return p == sys.SchedFIFO || p == sys.SchedRR, false
	}
	return false, false
}
