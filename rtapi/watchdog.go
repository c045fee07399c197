package rtapi

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/spinguard"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/internal/watchdog"
)

// The watchdog (TaskSpec.Watchdog): one thread per real-time instance;
// internal/watchdog has the mechanism.

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

// FaultError is what Wait returns for a task the watchdog faulted: the task
// did not complete a cycle within its watchdog timeout while its thread
// kept the CPU busy, so the thread was demoted to SCHED_OTHER. The body may
// still be running (Go cannot kill a goroutine); if it ever returns to
// WaitPeriod, WaitPeriod returns false.
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

// taskWatch is a task's part of the watchdog: its Entry, and the fault
// the watchdog reports through Wait and Faulted.
type taskWatch struct {
	watchdog.Entry // Timeout 0: not watched
	faulted        atomic.Bool
	faultc         chan struct{} // closed when faulted
	fault          *FaultError   // built at NewTask, filled in and published by closing faultc
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

// watchSubject is a Task as the watchdog sees it (watchdog.Subject),
// without adding methods to Task.
type watchSubject Task

func (s *watchSubject) Cycles() int64 { return s.stats.cycles.Load() }

func (s *watchSubject) Ended() bool { return s.wd.faulted.Load() || s.state.Load() == stateDone }

// Fault demotes the task's thread, marks it faulted and wakes its
// waiters. It allocates nothing: the error was built by NewTask.
func (s *watchSubject) Fault(stalled, cycles int64) {
	t := (*Task)(s)
	tid := int(t.stats.tid.Load())
	e := t.wd.fault
	e.Stalled = time.Duration(stalled)
	e.Cycles = cycles
	e.Tid = tid
	t.unguardTask() // first, so that the spin guard cannot undo the demotion
	e.DemoteErr = sys.SetScheduler(tid, sys.SchedOther, 0)
	t.ctl.Or(ctlFault)
	t.wd.faulted.Store(true)
	close(t.wd.faultc)
	t.rt.taskEnded()
}

// watch puts t under the watchdog of its RT, starting that watchdog if
// needed. It is called from Start once the task's thread is set up. On
// flavors that are not real-time, or with the watchdog disabled for t, it
// does nothing.
func (t *Task) watch() {
	if !t.rt.info.RealTime || t.wd.Timeout == 0 {
		return
	}
	rt := t.rt
	rt.mu.Lock()
	if rt.wd == nil {
		rt.wd = rt.newWatchdog()
	}
	wd := rt.wd
	rt.mu.Unlock()
	wd.Add(&t.wd.Entry, int(t.stats.tid.Load()))
}

// unwatch takes t off its RT's watchdog, if it is on it. The task calls it
// as it ends, so that the watchdog's loop scans live tasks only.
func (t *Task) unwatch() {
	rt := t.rt
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd != nil {
		wd.Remove(&t.wd.Entry)
	}
}

// newWatchdog makes rt's watchdog: one above the tasks (below 99 where
// RLIMIT_RTPRIO caps them), its own thread under the spin guard, faults
// logged.
func (rt *RT) newWatchdog() *watchdog.Dog {
	var guarded atomic.Pointer[spinguard.Guard] // the spin guard watching the loop's thread
	return watchdog.New(watchdog.Config{
		Priority: min(WatchdogPriority, rt.PrioHighest()+1),
		Go:       goLocked,
		Started: func(tid int) {
			if g := rt.guardWatchdog(tid); g != nil {
				guarded.Store(g)
			}
		},
		Exiting: func(tid int) {
			if g := guarded.Swap(nil); g != nil {
				_ = g.Unwatch(tid)
			}
		},
		Report: func(s watchdog.Subject) {
			e := (*Task)(s.(*watchSubject)).wd.fault
			rt.logger.Error("watchdog: task faulted", zap.String("task", e.Task),
				zap.Duration("stalled", e.Stalled), zap.Duration("timeout", e.Timeout),
				zap.Int64("cycles", e.Cycles), zap.Int("tid", e.Tid), zap.NamedError("demote_error", e.DemoteErr))
		},
		Logger: rt.logger,
	})
}

// guardWatchdog puts the watchdog's thread under the spin guard, if one
// runs and the thread is SCHED_FIFO, and returns the guard: the thread
// returns from its sleeps through the Go scheduler, where it can spin
// like any task thread, and nothing in the process runs above it.
func (rt *RT) guardWatchdog(tid int) *spinguard.Guard {
	s := &rt.spin
	s.mu.Lock()
	g := s.guard
	s.mu.Unlock()
	if g == nil || tid == 0 {
		return nil
	}
	p, prio, err := sys.Scheduler(tid)
	if err != nil || p != sys.SchedFIFO {
		return nil
	}
	s.watchdg.Store(tid, struct{}{})
	_ = g.Watch(tid, prio, DefaultSpinBound)
	return g
}

// stopWatchdog waits, at most d, for rt's watchdog to exit, which it does
// within one tick once no watched task is left. Close may call it after
// stopping the tasks, so that nothing of rt runs after Close returns.
func (rt *RT) stopWatchdog(d time.Duration) {
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd != nil {
		wd.Wait(d)
	}
}
