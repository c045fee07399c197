package rtapi

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/guard"
	"github.com/gortapi/gortapi/internal/sys"
)

// The runtime guard (Options.RuntimeGuard) and the watchdog
// (TaskSpec.Watchdog) are one guard process, internal/guard, with one
// loop; this file starts it, puts task threads under it and acts on its
// events. Its in-process steps are in procs.go (a P per task) and
// runtimefifo.go (the other threads at SCHED_FIFO 1).
// docs/GC.md, "The runtime guard", has the why and the measurements.

const (
	// spinBoundMin is how long a SCHED_FIFO task's thread may keep its
	// CPU without a break or a completed cycle before the guard demotes it
	// until it yields; a task's bound is this or its period if longer.
	spinBoundMin = 3 * time.Millisecond
	// guardTick is how often the guard may look at the watched threads.
	guardTick = time.Millisecond
)

// spinBound is a task's bound: a body may run most of its period.
func spinBound(spec TaskSpec) time.Duration { return max(spinBoundMin, spec.Period) }

// watchTimeout resolves TaskSpec.Watchdog; 0: not watched.
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

// guardOn reports whether the runtime guard's steps apply to rt's tasks:
// on flavors with OS threads, Options.RuntimeGuard On, or Auto on a
// real-time flavor.
func (rt *RT) guardOn() bool {
	switch {
	case !rt.traits.OSThreads || rt.opts.RuntimeGuard == Off:
		return false
	case rt.opts.RuntimeGuard == On:
		return true
	}
	return rt.info.RealTime
}

// watched reports whether the watchdog applies to t: a real-time flavor
// with OS threads, and a timeout.
func (t *Task) watched() bool {
	return t.rt.traits.OSThreads && t.rt.info.RealTime && t.wd.timeout > 0
}

// guardState is an RT's guard process, started by the first Start that
// needs it.
type guardState struct {
	mu     sync.Mutex // serialises start and close
	g      *guard.Guard
	err    error // why it did not start; kept so that it is tried once
	tried  bool
	closed bool
	warned sync.Map // task name -> struct{}: first spin demotion logged
	byTid  sync.Map // tid -> *Task
}

// startGuard starts rt's guard process once, if t needs it. It fails only
// when Options.RuntimeGuard is On and the guard cannot run; Auto warns.
func (rt *RT) startGuard(t *Task) error {
	if !rt.guardOn() && !t.watched() {
		return nil
	}
	s := &rt.guard
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if !s.tried {
		s.tried = true
		prio := min(sys.FIFOPrioMax, rt.PrioHighest()+1)
		s.g, s.err = guard.Start(prio, guardTick, rt.guardEvent, func(err error) {
			rt.logger.Error("runtime guard ended on its own: livelocks and runaway tasks are no longer caught", zap.Error(err))
		})
		switch {
		case s.err != nil && rt.opts.RuntimeGuard != On:
			rt.logger.Warn("runtime guard did not start: no watchdog, and a task thread that spins in the Go runtime can stall the task set until RT throttling (docs/GC.md)",
				zap.Error(s.err))
		case s.err == nil && s.g.Refused() != nil:
			rt.logger.Warn("runtime guard runs below the tasks' priority: runaway tasks on its CPU may go unnoticed",
				zap.Int("priority", prio), zap.Error(s.g.Refused()))
		}
	}
	if s.err != nil && rt.opts.RuntimeGuard == On {
		return fmt.Errorf("%w (Options.RuntimeGuard is on): %w", ErrNotSupported, s.err)
	}
	return nil
}

// runningGuard is rt's guard process, nil when none runs.
func (rt *RT) runningGuard() *guard.Guard {
	s := &rt.guard
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g
}

// guardTask puts t's thread under the guard: the spin bound for a
// real-time thread under the runtime guard, the watchdog when t has a
// timeout. Called on the task's thread before Start returns.
func (t *Task) guardTask() {
	g := t.rt.runningGuard()
	if g == nil {
		return
	}
	b := &t.binding
	var bound, timeout time.Duration
	if t.rt.guardOn() && (b.Policy == sys.SchedFIFO || b.Policy == sys.SchedRR) {
		bound = spinBound(t.spec)
	}
	if t.watched() {
		timeout = t.wd.timeout
	}
	if bound == 0 && timeout == 0 {
		return
	}
	slot, index, ok := g.NewSlot()
	if !ok {
		t.rt.logger.Warn("runtime guard: no slot left; the task is not guarded", zap.String("task", t.spec.Name))
		return
	}
	t.wd.g, t.wd.slot, t.wd.index = g, slot, index
	t.tc.guardSlot = slot
	t.rt.guard.byTid.Store(b.Tid, t)
	if err := g.Watch(b.Tid, max(b.Priority, 1), bound, timeout, index); err != nil {
		t.rt.logger.Warn("runtime guard cannot watch the task", zap.String("task", t.spec.Name), zap.Error(err))
	}
}

// unguardTask takes t's thread off the guard before the thread ends (its
// tid may be reused).
func (t *Task) unguardTask() {
	if g := t.wd.g; g != nil {
		_ = g.Unwatch(t.binding.Tid)
		t.tc.guardSlot = nil
		g.FreeSlot(t.wd.index)
		t.wd.g = nil
	}
}

// setIdle tells the guard that t is paused on purpose: not a runaway.
// RT-safe.
func (t *Task) setIdle(idle bool) {
	if s := t.tc.guardSlot; s != nil {
		var v int64
		if idle {
			v = 1
		}
		s.Idle.Store(v)
	}
}

// guardEvent is the guard's report, on a goroutine of its own.
func (rt *RT) guardEvent(e guard.Event) {
	if e.Tick {
		runtimeFIFO.tick()
		return
	}
	v, ok := rt.guard.byTid.Load(e.Tid)
	if !ok {
		return
	}
	t := v.(*Task)
	switch {
	case e.Fault:
		t.fault(e)
	case e.Err != nil:
		if t.state.Load() == stateDone && (errors.Is(e.Err, syscall.ENOENT) || errors.Is(e.Err, syscall.ESRCH)) {
			return // ended before the guard got to it
		}
		rt.logger.Warn("runtime guard", zap.String("task", t.spec.Name), zap.Int("tid", e.Tid), zap.Error(e.Err))
	case e.Demoted:
		t.stats.spinBreaks.Add(1)
		if _, seen := rt.guard.warned.LoadOrStore(t.spec.Name, struct{}{}); !seen {
			rt.logger.Warn("runtime guard: task thread kept its CPU without a break; demoted to SCHED_OTHER until it yields (Stats.SpinBreaks counts each time)",
				zap.String("task", t.spec.Name), zap.Int("tid", e.Tid), zap.Duration("ran", e.Ran),
				zap.Duration("bound", spinBound(t.spec)))
		}
	}
}

// fault marks t faulted after the guard demoted its thread for good, and
// wakes its waiters; SafeState then runs on a goroutine of its own
// (safeStateOnFault). A task that has ended is left alone.
func (t *Task) fault(e guard.Event) {
	if t.state.Load() == stateDone || t.wd.faulted.Load() {
		return
	}
	f := t.wd.fault
	f.Stalled, f.Cycles, f.Tid, f.DemoteErr = e.Stalled, e.Cycles, e.Tid, e.Err
	t.ctl.Or(ctlFault)
	t.wd.faulted.Store(true)
	close(t.wd.faultc)
	t.rt.taskEnded()
	t.rt.logger.Error("watchdog: task faulted", zap.String("task", f.Task),
		zap.Duration("stalled", f.Stalled), zap.Duration("timeout", f.Timeout),
		zap.Int64("cycles", f.Cycles), zap.Int("tid", f.Tid), zap.NamedError("demote_error", f.DemoteErr))
}

// closeGuard ends rt's guard process, once the tasks have ended.
func (rt *RT) closeGuard() error {
	s := &rt.guard
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.g == nil {
		return nil
	}
	if err := s.g.Close(); err != nil {
		return fmt.Errorf("rtapi: close runtime guard: %w", err)
	}
	return nil
}

// taskWatch is a task's place under the guard and the fault Wait and
// Faulted report.
type taskWatch struct {
	timeout time.Duration // 0: not watched
	g       *guard.Guard  // watching the thread; set and cleared on it
	slot    *guard.Slot
	index   int
	faulted atomic.Bool
	faultc  chan struct{} // closed when faulted
	fault   *FaultError   // built at NewTask, filled in and published by closing faultc
}

// FaultError is what Wait returns for a task whose thread kept its CPU
// busy for its watchdog timeout without completing a cycle, and was
// demoted to SCHED_OTHER. The body may still be running (Go cannot kill a
// goroutine); if it returns to WaitPeriod, WaitPeriod returns false.
type FaultError struct {
	Task      string
	Timeout   time.Duration
	Stalled   time.Duration // time since the last completed cycle
	Cycles    int64         // cycles completed
	Tid       int           // the demoted thread
	DemoteErr error         // why demotion failed; the thread then stays real-time
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
