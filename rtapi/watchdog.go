package rtapi

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/spinguard"
	"github.com/gortapi/gortapi/internal/sys"
)

// The watchdog catches runaway real-time tasks. A SCHED_FIFO thread stuck
// in a loop owns its CPU: nothing of lower priority runs there again until
// the kernel's RT throttling (a blunt 5 % by default) steps in. One
// watchdog thread per RT instance runs SCHED_FIFO 99, above every task
// (task priorities stop at 98), wakes a few times per timeout, and checks
// that each watched task has completed a cycle recently. A task that has
// not, and whose thread was on its CPU for at least half of that time (a
// runaway loop, not a task that is blocked or held off its CPU), is
// demoted to SCHED_OTHER, marked faulted (Wait returns a *FaultError), and
// logged; the other tasks keep running. The CPU-time condition keeps
// healthy tasks safe from false positives: a task parked by the Go
// scheduler, preempted by the host or blocked in a system call for longer
// than its timeout burns no CPU meanwhile.
//
// The watchdog only runs on real-time flavors: elsewhere task threads have
// no priority to take away. Its loop neither allocates nor takes a lock a
// task-side goroutine could hold: a goroutine that holds a lock may be the
// one starved on the runaway task's CPU.

// Watchdog defaults. A task's timeout is TaskSpec.Watchdog, or
// DefaultWatchdogPeriods periods plus DefaultWatchdogSlack. The slack is
// generous because a healthy task can be held off its CPU by the machine
// (host steal, SMIs, interrupt storms: tens of milliseconds on a busy
// virtual machine), and a false positive demotes a healthy task.
const (
	DefaultWatchdogPeriods = 5
	DefaultWatchdogSlack   = 50 * time.Millisecond
	// WatchdogPriority is the SCHED_FIFO priority of the watchdog thread:
	// the kernel's highest, one above PrioHighest. Where RLIMIT_RTPRIO
	// caps the task priorities, the watchdog runs one above the cap.
	WatchdogPriority = sys.FIFOPrioMax
)

// watchdog tick bounds: it checks every timeout/4, within these.
const (
	minWatchdogTick = time.Millisecond
	maxWatchdogTick = 25 * time.Millisecond
)

// FaultError is what Wait returns for a task the watchdog faulted: the task
// did not complete a cycle within its watchdog timeout while its thread
// kept the CPU busy, so the thread was demoted to SCHED_OTHER. The body may still be running (Go cannot kill a
// goroutine); if it ever returns to WaitPeriod, WaitPeriod returns false.
type FaultError struct {
	Task string
	// Timeout is the task's watchdog timeout; Stalled how long it had gone
	// without completing a cycle when it was caught.
	Timeout time.Duration
	Stalled time.Duration
	// Cycles is the number of cycles the task had completed.
	Cycles int64
	// Tid is the demoted thread; DemoteErr is why demotion failed, if it
	// did (the thread then keeps its real-time policy).
	Tid       int
	DemoteErr error
}

func (e *FaultError) Error() string {
	s := fmt.Sprintf("task %q faulted: no cycle completed for %v (watchdog timeout %v, after %d cycles)",
		e.Task, e.Stalled.Round(time.Microsecond), e.Timeout, e.Cycles)
	if e.DemoteErr != nil {
		return s + fmt.Sprintf("; demoting tid %d to SCHED_OTHER failed: %v", e.Tid, e.DemoteErr)
	}
	return s + fmt.Sprintf("; tid %d demoted to SCHED_OTHER", e.Tid)
}

// Is makes errors.Is(err, ErrFaulted) true.
func (e *FaultError) Is(target error) bool { return target == ErrFaulted }

// Unwrap returns the demotion failure, if any.
func (e *FaultError) Unwrap() error { return e.DemoteErr }

// taskWatch is a task's part of the watchdog. The watchdog goroutine owns
// lastCycles and lastProgress; the rest is set before the task is watched.
type taskWatch struct {
	timeout int64 // ns; 0: not watched
	// idle is set by the task while it is parked in Pause: not progressing
	// on purpose.
	idle         atomic.Bool
	faulted      atomic.Bool
	faultc       chan struct{} // closed when faulted
	fault        *FaultError   // built at Start, filled in and published by closing faultc
	lastCycles   int64
	lastProgress int64
	// cpuClock is the task thread's CPU-time clock; cpuAtProgress its
	// reading when the task last made progress.
	cpuClock      int32
	cpuAtProgress int64
}

// watchTimeout resolves TaskSpec.Watchdog: negative disables, zero picks
// the default for periodic tasks (none for tasks that are not periodic).
func watchTimeout(spec TaskSpec) time.Duration {
	switch {
	case spec.Watchdog < 0:
		return 0
	case spec.Watchdog > 0:
		return spec.Watchdog
	case spec.Period > 0:
		return DefaultWatchdogPeriods*spec.Period + DefaultWatchdogSlack
	}
	return 0
}

// watchdog is the per-RT watchdog thread and the tasks it watches.
type watchdog struct {
	rt *RT
	// tasks is replaced, never modified, so that the loop reads it
	// without a lock.
	tasks   atomic.Pointer[[]*Task]
	tick    atomic.Int64
	mu      sync.Mutex // serialises add and the loop's exit
	running bool
	exited  chan struct{}
	reports chan *FaultError
	tid     atomic.Int64
	guarded atomic.Pointer[spinguard.Guard] // the spin guard watching the loop's thread
}

// watch puts t under the watchdog of its RT, starting that watchdog if
// needed. It is called from Start once the task's thread is set up. On
// flavors that are not real-time, or with the watchdog disabled for t, it
// does nothing.
func (t *Task) watch() {
	if !t.rt.info.RealTime || t.wd.timeout == 0 {
		return
	}
	rt := t.rt
	rt.mu.Lock()
	if rt.wd == nil {
		rt.wd = &watchdog{rt: rt}
	}
	wd := rt.wd
	rt.mu.Unlock()
	wd.add(t)
}

func (wd *watchdog) add(t *Task) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	t.wd.lastCycles = t.stats.cycles.Load()
	t.wd.lastProgress = sys.Nanotime()
	t.wd.cpuClock = threadCPUClock(int(t.stats.tid.Load()))
	t.wd.cpuAtProgress = threadCPUTime(t.wd.cpuClock)
	var list []*Task
	if p := wd.tasks.Load(); p != nil {
		list = append(list, *p...)
	}
	list = append(list, t)
	tick := int64(maxWatchdogTick)
	for _, o := range list {
		tick = min(tick, max(o.wd.timeout/4, int64(minWatchdogTick)))
	}
	wd.tick.Store(tick)
	wd.tasks.Store(&list)
	if wd.running {
		return
	}
	wd.running = true
	wd.exited = make(chan struct{})
	wd.reports = make(chan *FaultError, 16) // closed by the loop as it exits
	go wd.report(wd.reports)
	ready := make(chan struct{})
	goLocked(func() { wd.loop(ready) })
	<-ready
	wd.guard()
}

// guard puts the watchdog's own thread under the spin guard: it returns
// from its sleeps through the Go scheduler, where it can spin like any
// task thread, and nothing in the process runs above it.
func (wd *watchdog) guard() {
	s := &wd.rt.spin
	s.mu.Lock()
	g := s.guard
	s.mu.Unlock()
	tid := int(wd.tid.Load())
	if g == nil || tid == 0 {
		return
	}
	if p, prio, err := sys.Scheduler(tid); err != nil || p != sys.SchedFIFO {
		return
	} else {
		s.watchdg.Store(tid, struct{}{})
		_ = g.Watch(tid, prio, DefaultSpinBound)
		wd.guarded.Store(g)
	}
}

// unwatch takes t off its RT's watchdog, if it is on it. The task calls it
// as it ends, so that the watchdog's loop scans live tasks only.
func (t *Task) unwatch() {
	rt := t.rt
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd != nil {
		wd.remove(t)
	}
}

func (wd *watchdog) remove(t *Task) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	p := wd.tasks.Load()
	if p == nil || !slices.Contains(*p, t) {
		return
	}
	list := slices.DeleteFunc(slices.Clone(*p), func(o *Task) bool { return o == t })
	tick := int64(maxWatchdogTick)
	for _, o := range list {
		tick = min(tick, max(o.wd.timeout/4, int64(minWatchdogTick)))
	}
	wd.tick.Store(tick)
	wd.tasks.Store(&list)
}

// report logs faults, off the watchdog thread: a logger may block.
func (wd *watchdog) report(reports <-chan *FaultError) {
	for e := range reports {
		wd.rt.logger.Error("watchdog: task faulted", zap.String("task", e.Task),
			zap.Duration("stalled", e.Stalled), zap.Duration("timeout", e.Timeout),
			zap.Int64("cycles", e.Cycles), zap.Int("tid", e.Tid), zap.NamedError("demote_error", e.DemoteErr))
	}
}

// loop is the watchdog thread. It runs on a locked thread of its own
// (goLocked) at SCHED_FIFO 99 and sleeps with an absolute clock_nanosleep
// between checks. It exits (and its thread with it, being locked) when no
// task is left to watch.
func (wd *watchdog) loop(ready chan<- struct{}) {
	defer close(wd.exited)
	defer func() {
		// Before the thread ends and its tid can be reused.
		if g := wd.guarded.Swap(nil); g != nil {
			_ = g.Unwatch(int(wd.tid.Load()))
		}
	}()
	wd.tid.Store(int64(sys.Gettid()))
	// One above the tasks: below 99 where RLIMIT_RTPRIO caps the tasks.
	prio := min(WatchdogPriority, wd.rt.PrioHighest()+1)
	if err := sys.SetScheduler(0, sys.SchedFIFO, prio); err != nil {
		// Still useful below the tasks' priority on other CPUs; say so.
		wd.rt.logger.Warn("watchdog: cannot run at SCHED_FIFO above the tasks; runaway tasks on its CPU may go unnoticed",
			zap.Int("priority", prio), zap.Error(err))
	}
	close(ready)
	next := sys.Nanotime()
	for {
		next += wd.tick.Load()
		now := sys.Nanotime()
		if next < now {
			next = now
		}
		// Through the Go scheduler's syscall path, so that the P is free
		// for the rest of the process while the watchdog sleeps. (A raw
		// sleep keeping the P was tried: sysmon then preempts the
		// watchdog every 10 ms, and coming back needs a SCHED_OTHER
		// helper thread, which is what a runaway starves.)
		_ = sys.SleepUntil(next) // only fails on a bad deadline; the loop re-reads the clock
		if !wd.check(sys.Nanotime()) {
			return
		}
	}
}

// check looks at every watched task once. It returns false when the
// watchdog has nothing left to watch and has deregistered itself.
func (wd *watchdog) check(now int64) bool {
	seen := wd.tasks.Load()
	list := *seen
	live := 0
	for _, t := range list {
		if t.wd.faulted.Load() || t.state.Load() == stateDone {
			continue
		}
		live++
		c := t.stats.cycles.Load()
		cpu := threadCPUTime(t.wd.cpuClock)
		if c != t.wd.lastCycles || t.wd.idle.Load() {
			t.wd.lastCycles, t.wd.lastProgress, t.wd.cpuAtProgress = c, now, cpu
			continue
		}
		// A runaway task keeps its CPU busy. One that is held off its
		// CPU (by the host, by higher priorities, or parked by the Go
		// scheduler waiting for a P) or blocked in its body is late, not
		// runaway: it burnt little CPU time while stalled.
		stalled := now - t.wd.lastProgress
		if stalled > t.wd.timeout && cpu >= 0 && t.wd.cpuAtProgress >= 0 && cpu-t.wd.cpuAtProgress >= stalled/2 {
			wd.fault(t, now)
		}
	}
	if live > 0 {
		return true
	}
	return !wd.leave(seen)
}

// leave deregisters the watchdog if its list is still seen, the one in
// which check found nothing live, and reports whether it did. A list
// replaced since (a task added, even with another removed) keeps it.
func (wd *watchdog) leave(seen *[]*Task) bool {
	if !wd.mu.TryLock() {
		return false // a task is being added right now
	}
	defer wd.mu.Unlock()
	if wd.tasks.Load() != seen {
		return false
	}
	wd.tasks.Store(new([]*Task))
	wd.running = false
	close(wd.reports) // the reporter ends; only this goroutine sends
	return true
}

// fault demotes t's thread, marks t faulted and wakes its waiters. It
// allocates nothing: the error was built when t was started.
func (wd *watchdog) fault(t *Task, now int64) {
	tid := int(t.stats.tid.Load())
	e := t.wd.fault
	e.Stalled = time.Duration(now - t.wd.lastProgress)
	e.Cycles = t.wd.lastCycles
	e.Tid = tid
	t.unguardTask() // first, so that the spin guard cannot undo the demotion
	e.DemoteErr = sys.SetScheduler(tid, sys.SchedOther, 0)
	t.ctl.Or(ctlFault)
	t.wd.faulted.Store(true)
	close(t.wd.faultc)
	t.rt.taskEnded()
	select {
	case wd.reports <- e:
	default: // the reporter is behind; Wait still returns the error
	}
}

// threadCPUClock is the clock id of thread tid's CPU time
// (pthread_getcpuclockid: CPUCLOCK_SCHED, per thread).
func threadCPUClock(tid int) int32 { return (^int32(tid))<<3 | 6 }

// threadCPUTime reads a thread's CPU time in nanoseconds; -1 when it
// cannot (the thread is gone). It does not allocate. A raw system call:
// a SCHED_FIFO thread returning from the scheduler's syscall path may
// have to wait for a SCHED_OTHER thread (sysmon) that holds its
// goroutine; the fewer such returns at priority 99, the better.
func threadCPUTime(clock int32) int64 { return sys.ThreadCPUTime(clock) }

// stopWatchdog waits, at most d, for rt's watchdog to exit, which it does
// within one tick once no watched task is left. Close may call it after
// stopping the tasks, so that nothing of rt runs after Close returns.
func (rt *RT) stopWatchdog(d time.Duration) {
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd == nil {
		return
	}
	wd.mu.Lock()
	running, exited := wd.running, wd.exited
	wd.mu.Unlock()
	if running {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
		}
	}
}
