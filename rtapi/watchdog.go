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

// The watchdog (TaskSpec.Watchdog): internal/watchdog; docs/GC.md,
// "Watchdog".

// Watchdog defaults: a task's timeout is TaskSpec.Watchdog, or
// DefaultWatchdogPeriods periods plus DefaultWatchdogSlack. The slack
// covers a healthy task held off its CPU by the machine (host steal,
// SMIs), which a false positive would demote.
const (
	DefaultWatchdogPeriods = 5
	DefaultWatchdogSlack   = 50 * time.Millisecond
	// WatchdogPriority is the watchdog thread's SCHED_FIFO priority, the
	// kernel's highest; under an RLIMIT_RTPRIO cap it runs at PrioHighest+1.
	WatchdogPriority = sys.FIFOPrioMax
)

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

// taskWatch is a task's watchdog Entry and the fault Wait and Faulted report.
type taskWatch struct {
	watchdog.Entry // Timeout 0: not watched
	faulted        atomic.Bool
	faultc         chan struct{} // closed when faulted
	fault          *FaultError   // built at NewTask, filled in and published by closing faultc
}

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

// watchSubject is a Task as a watchdog.Subject, without adding methods to Task.
type watchSubject Task

func (s *watchSubject) Cycles() int64 { return s.stats.cycles.Load() }

func (s *watchSubject) Ended() bool { return s.wd.faulted.Load() || s.state.Load() == stateDone }

// Fault demotes the task's thread, marks it faulted and wakes its
// waiters. It allocates nothing.
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

// watch puts t under its RT's watchdog, starting it if needed, on a
// real-time flavor with t's watchdog on. Called from Start.
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

// unwatch takes t off its RT's watchdog as the task ends.
func (t *Task) unwatch() {
	rt := t.rt
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd != nil {
		wd.Remove(&t.wd.Entry)
	}
}

// newWatchdog makes rt's watchdog: one above the tasks, its own thread
// under the spin guard, faults logged.
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

// guardWatchdog puts the watchdog's SCHED_FIFO thread under the spin
// guard, if one runs, and returns the guard: it wakes through the Go
// scheduler and can spin like any task thread.
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

// stopWatchdog waits at most d for rt's watchdog to exit, within a tick
// of its last task ending.
func (rt *RT) stopWatchdog(d time.Duration) {
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	if wd != nil {
		wd.Wait(d)
	}
}
