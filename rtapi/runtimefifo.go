package rtapi

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/guard"
	"github.com/gortapi/gortapi/internal/sys"
)

// Runtime threads at SCHED_FIFO 1 and their valve, the runtime guard's
// third step, clocked by the guard's ticks: docs/GC.md, "Runtime threads
// at SCHED_FIFO 1", has the why and the measurements.

// The valve trips when the other threads use valveShare of a CPU over the
// last valveTicks ticks of valveTick, less the time CPUs busy without a
// break took no tick (a virtual machine's host not running them:
// sys.StoppedCPUTime), which the thread that was running there is
// charged with.
const (
	valveTick  = guard.TickEvery
	valveTicks = 5
	valveShare = 0.8 // of one CPU
)

// fifoBoard counts the tasks that raise the process's other threads; one
// per process (runtimeFIFO).
type fifoBoard struct {
	mu      sync.Mutex
	tasks   map[int]int64               // task thread ids counted and not ended: their CPU time when counted
	gone    int64                       // CPU time ended counted tasks used while counted
	samples [valveTicks + 1]valveSample // at the last ticks, a ring
	ticks   int
	tripped bool  // the valve gave the threads back; no raise until the last task ends
	ticked  int64 // when tick last ran
	log     *zap.Logger
	set     func(tid int, p sys.Policy, prio int) error // sys.SetScheduler
	get     func(tid int) (sys.Policy, int, error)      // sys.Scheduler
	threads func() ([]int, error)                       // sys.Threads
	cpu     func(clock int32) int64                     // sys.ThreadCPUTime
	// (*sys.CPUAccounts).Read, nil for none
	accounts func(into []sys.CPUAccount) ([]sys.CPUAccount, int64, error)
}

// valveSample is what the valve's tick read.
type valveSample struct {
	other int64            // other()
	accts []sys.CPUAccount // the CPUs' accounts; nil: not read
	at    int64            // when
}

var runtimeFIFO = fifoBoard{set: sys.SetScheduler, get: sys.Scheduler, threads: sys.Threads, cpu: sys.ThreadCPUTime,
	accounts: sys.NewCPUAccounts().Read}

// add counts the task on thread tid and raises every SCHED_OTHER thread
// of the process to SCHED_FIFO 1 (raise), unless the valve tripped. It
// returns the first error; the threads it could raise stay raised.
func (b *fifoBoard) add(tid int, log *zap.Logger) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tasks == nil {
		b.tasks = make(map[int]int64)
	}
	if _, ok := b.tasks[tid]; ok {
		return nil
	}
	b.tasks[tid] = b.cpu(sys.ThreadClock(tid))
	b.log = log
	if b.tripped {
		return nil
	}
	return b.raise() // the first raises all; a later one those made since
}

// raise sets every SCHED_OTHER thread to SCHED_FIFO 1, reset on fork
// (sys.SetScheduler): a process the program starts (a scraper, a loadusr
// component) starts SCHED_OTHER, as it would have without the tasks,
// rather than hog a CPU at FIFO 1 outside the valve and keep the
// program's FIFO 1 threads off it. A thread a raised thread makes starts
// SCHED_OTHER too; the next tick's reraise raises it. Under mu.
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

// lower sets every FIFO 1 thread but the counted tasks' back to
// SCHED_OTHER. Under mu.
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

// settle applies change to every thread, again while a pass changed one:
// a thread made during a pass inherits its maker's old policy.
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

// remove uncounts the task on thread tid, from that thread; the last one
// lowers the other threads.
func (b *fifoBoard) remove(tid int) {
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
	if len(b.tasks) > 0 {
		return
	}
	b.tripped, b.gone, b.ticks = false, 0, 0
	b.lower()
}

// other is the process's CPU time in ns less what the counted tasks used
// while counted, or -1 when a clock cannot be read. Under mu.
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

// check is the valve's tick: while the valve is open, it lowers the
// threads once they used valveShare of a CPU over the last valveTicks
// ticks, not counting up to the time CPUs busy without a break took no
// tick, and reports whether it did.
func (b *fifoBoard) check() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.other()
	if o < 0 || len(b.tasks) == 0 {
		b.ticks = 0
		return false
	}
	now := &b.samples[b.ticks%len(b.samples)]
	now.other = o
	if b.accounts != nil {
		a, at, err := b.accounts(now.accts[:0])
		now.accts, now.at = a, at
		if err != nil {
			now.accts = nil
		}
	}
	b.ticks++
	if b.ticks < len(b.samples) || b.tripped {
		return false
	}
	then := &b.samples[b.ticks%len(b.samples)]
	used := o - then.other
	var stopped int64
	if now.accts != nil && then.accts != nil {
		stopped = max(min(sys.StoppedCPUTime(then.accts, now.accts, then.at, now.at), used), 0)
	}
	if float64(used-stopped) < valveShare*float64(valveTicks*valveTick) {
		return false
	}
	b.tripped = true
	b.lower()
	if b.log != nil {
		b.log.Warn("runtime threads back to SCHED_OTHER: the program kept a CPU busy at SCHED_FIFO 1, which would keep ordinary processes off it (docs/GC.md)",
			zap.Duration("cpu", time.Duration(used)), zap.Duration("stopped", time.Duration(stopped)), zap.Duration("over", valveTicks*valveTick))
	}
	return true
}

// reraise raises threads made since the last pass: a raised thread's
// (reset on fork) start SCHED_OTHER. Not after the valve tripped.
func (b *fifoBoard) reraise() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.tasks) > 0 && !b.tripped {
		_ = b.raise()
	}
}

// tick runs check, or else reraise, at most once per half valveTick: the
// guards of several RTs may all tick it.
func (b *fifoBoard) tick() {
	b.mu.Lock()
	now := sys.Nanotime()
	early := now-b.ticked < int64(valveTick/2)
	if !early {
		b.ticked = now
	}
	b.mu.Unlock()
	if !early && !b.check() {
		b.reraise()
	}
}

// runtimeFIFO reports whether a task with policy p counts on the board:
// a SCHED_FIFO or SCHED_RR task under the runtime guard, once its process
// runs (it clocks the valve).
func (rt *RT) runtimeFIFO(p sys.Policy) bool {
	return (p == sys.SchedFIFO || p == sys.SchedRR) && rt.guardOn() && rt.runningGuard() != nil
}
