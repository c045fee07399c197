package rtapi

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/guard"
	"github.com/gortapi/gortapi/internal/sys"
)

// The per-cycle path: it allocates nothing, takes no lock and logs
// nothing; the Waker is its one interface (HACKING.md, "The wake path").

// TaskContext is what a task body sees of its task. It belongs to the
// task's goroutine: its methods must only be called from the body.
type TaskContext struct {
	task    *Task
	waker   backend.Waker
	period  int64
	oneshot bool // nanosleep: each deadline is a new absolute sleep
	skip    bool // OverrunPolicy Skip

	release    int64 // release time of the current cycle
	wake       int64 // when the current cycle's body started
	cycle      int64
	missed     int64       // releases the last wait counted as overrun (Missed)
	pending    uint64      // releases owed under CatchUp, run without sleeping
	correction int64       // PLL correction added to each period
	ceilPrio   int32       // the thread's own priority while it takes part in the wake-up ceiling (ceiling.go); 0: not
	guardSlot  *guard.Slot // the watchdog's count of the cycles (guard.go); nil: not watched

	sampleEvery int64
	nextSample  int64
	usage       sys.ThreadUsage

	// interference counters (interference.go)
	interference      bool
	exactInterference bool  // read the thread's counters every cycle
	nextRead          int64 // cycle of the next sampled read
	readCycle         int64 // cycle of the last read
	readSleeps        int64 // the waker's Sleeps at the last read
	readCounted       uint8 // what the reads of readCycle counted (counted* bits)
	gcAtStart         bool  // GC was marking when the body started
	gcAtEnd           bool  // GC was marking when the previous body ended
	lateThreshold     int64
	counters          bool // getrusage counters mean something: not on a virtual clock

	// deadline policy (DeadlinePolicy; policy.go)
	maxOverruns int64 // 0: no limit
	maxLate     int64 // ns; 0: no limit
	overrunRun  int64 // consecutive cycles whose body ended at or after their deadline
	tripped     bool  // the policy ended the task

	trace tracer // TaskSpec.TraceMark (tracemark.go)
}

// WaitPeriod ends the current cycle and sleeps until the task's next
// release (rtapi_wait). It returns false when the task has been asked to
// stop: the body should then return. It blocks while the task is paused;
// Stop and Pause interrupt the sleep at once. A task that is not periodic
// does not sleep. It allocates nothing, takes no lock and logs nothing.
// RT-safe.
func (tc *TaskContext) WaitPeriod() bool {
	t := tc.task
	end := tc.waker.EndCycle()
	requests := t.ctl.And(^ctlBody) & ctlRequests
	t.stats.exec.Record(time.Duration(end - tc.wake))
	if tc.interference {
		tc.observe()
	}
	if tc.cycle >= tc.nextSample {
		tc.sampleUsage()
	}
	if requests != 0 {
		if run, _ := tc.control(); !run {
			return false
		}
	}
	if tc.period > 0 && tc.overran(end) {
		return false // the deadline policy tripped
	}
	overruns := t.stats.overruns.Load()
	next, now, ok := tc.next(end)
	for {
		if ok && tc.maxLate > 0 && now-next > tc.maxLate {
			tc.trip(0, now-next)
			return false
		}
		if ok && tc.start(next, now) {
			tc.missed = t.stats.overruns.Load() - overruns
			return true
		}
		// A request came in. One withdrawn before control looked (Pause
		// then Resume) leaves this wait's release to run, on time.
		run, parked := tc.control()
		if !run {
			return false
		}
		if !ok || parked {
			next, now, ok = tc.next(tc.waker.Now())
		}
	}
}

// next waits for the release after a body that ended at end, counting
// overrun releases. It returns the release and when it woke; ok is false
// when the wait was interrupted.
func (tc *TaskContext) next(end int64) (next, now int64, ok bool) {
	t := tc.task
	if tc.period == 0 {
		return tc.release, tc.waker.Now(), true
	}
	next = tc.release + tc.period + tc.correction
	if tc.pending > 0 {
		tc.pending-- // CatchUp: run the owed cycle now
		return next, end, true
	}
	late := next <= end // the release passed while the body ran
	if tc.oneshot && late {
		t.stats.overruns.Store(t.stats.overruns.Load() + 1)
		if !tc.skip {
			return next, end, true
		}
		missed := (end-next)/tc.period + 1
		t.stats.overruns.Store(t.stats.overruns.Load() + missed - 1)
		next += missed * tc.period
		late = false
	}
	for {
		var releases uint64
		var err error
		raised := tc.raiseToCeiling()
		now, releases, err = tc.waker.Wait(next)
		if raised {
			tc.lowerFromCeiling()
		}
		if err != nil {
			t.stats.waitErrors.Store(t.stats.waitErrors.Load() + 1)
		}
		if releases == 0 {
			return next, now, false
		}
		if !tc.oneshot && late {
			// Every release the periodic timer reports passed while the
			// body ran, the one at next included.
			t.stats.overruns.Store(t.stats.overruns.Load() + int64(releases))
			if tc.skip {
				next += int64(releases) * tc.period
				late = false
				continue // wait for the first release after them
			}
			tc.pending = releases - 1
			return next, now, true
		}
		if releases > 1 {
			// The timer fired more than once while the task slept late.
			missed := releases - 1
			t.stats.overruns.Store(t.stats.overruns.Load() + int64(missed))
			if tc.skip {
				next += int64(missed) * tc.period
			} else {
				tc.pending = missed
			}
		}
		latest := next
		if tc.pending > 0 {
			latest += int64(tc.pending) * tc.period
		}
		latency := now - latest
		tc.recordWakeup(latency)
		if tc.trace.threshold > 0 && latency > tc.trace.threshold {
			tc.traceLate(latency, tc.cycle+1)
		}
		return next, now, true
	}
}

// recordWakeup records a measured wake-up: its latency and, past the late
// threshold, the late count and its cause, in one update that Task.Stats
// reads whole (taskStats.wakeSeq). It runs before the body, so that a
// Stats taken at any point of the cycle counts a late wake-up with its
// latency or not at all.
func (tc *TaskContext) recordWakeup(latency int64) {
	s := &tc.task.stats
	late := tc.interference && latency > tc.lateThreshold
	var cause *atomic.Int64
	if late {
		cause = tc.lateCause() // reads the thread's counters: not inside the update
	}
	seq := s.wakeSeq.Load()
	s.wakeSeq.Store(seq + 1)
	s.latency.Record(time.Duration(latency))
	if late {
		s.intf.late.Store(s.intf.late.Load() + 1)
		if cause != nil {
			cause.Store(cause.Load() + 1)
		}
	}
	s.wakeSeq.Store(seq + 2)
}

// start starts the cycle of release, woken at now. It fails when a
// control request is pending (HACKING.md, "The control word").
func (tc *TaskContext) start(release, now int64) bool {
	if !tc.task.ctl.CompareAndSwap(0, ctlBody) {
		return false
	}
	tc.release = release
	tc.cycle++
	tc.task.stats.cycles.Store(tc.cycle)
	if g := tc.guardSlot; g != nil {
		g.Cycles.Store(tc.cycle) // the watchdog's count (guard.go)
	}
	tc.wake = now
	tc.gcAtStart = tc.interference && GCMarking()
	return true
}

// control handles Stop and Pause off the common path: run is false when
// the task must stop, parked true when it paused. After a pause it
// re-arms the timer at the first release after now on the period grid.
func (tc *TaskContext) control() (run, parked bool) {
	if controlHook != nil {
		controlHook()
	}
	t := tc.task
	c := t.ctl.Load()
	if c&(ctlStop|ctlFault) != 0 {
		return false, false
	}
	if c&ctlPause == 0 {
		return true, false
	}
	_ = tc.waker.Suspend()
	t.setIdle(true) // parked on purpose: not a runaway
	for {
		<-t.kick
		c = t.ctl.Load()
		if c&(ctlStop|ctlFault) != 0 {
			t.setIdle(false)
			return false, true
		}
		if c&ctlPause == 0 {
			break
		}
		_ = tc.waker.Suspend() // a Pause came after the Resume that woke us
	}
	t.setIdle(false)
	now := tc.waker.Now()
	tc.pending = 0
	if tc.period > 0 {
		// The periods spent paused are not overruns.
		first := tc.release + tc.period
		if first <= now {
			first += ((now-first)/tc.period + 1) * tc.period
		}
		tc.release = first - tc.period - tc.correction
		_ = tc.waker.Arm(first, tc.period)
	} else {
		tc.waker.Rejoin() // no wait follows to put it back on the schedule
	}
	return true, true
}

// controlHook, set by tests only, runs as control starts.
var controlHook func()

// sampleUsage reads the thread's getrusage counters into the statistics,
// every sampleEvery cycles (about every 100 ms) and when the task ends; with
// the interference counters on, only when it ends.
func (tc *TaskContext) sampleUsage() {
	if tc.interference {
		tc.readInterference(tc.cycle)
		return
	}
	tc.nextSample = tc.cycle + tc.sampleEvery
	if sys.ReadThreadUsage(&tc.usage) != nil {
		return
	}
	s := &tc.task.stats
	s.minorFaults.Store(tc.usage.MinorFaults)
	s.majorFaults.Store(tc.usage.MajorFaults)
	s.voluntary.Store(tc.usage.VoluntarySwitches)
	s.involuntary.Store(tc.usage.InvoluntarySwitches)
}

// Now reads the flavor's clock: CLOCK_MONOTONIC nanoseconds, or virtual
// time on the sim flavor.
// RT-safe.
func (tc *TaskContext) Now() int64 { return tc.waker.Now() }

// Release is the time the current cycle was scheduled to start (for the
// first cycle, the time the task started).
// RT-safe.
func (tc *TaskContext) Release() int64 { return tc.release }

// Deadline is the time the current cycle must end by: the next release,
// Release plus the period and any PLL correction. A task that is not
// periodic has no deadline: Deadline is then math.MaxInt64.
// RT-safe.
func (tc *TaskContext) Deadline() int64 {
	if tc.period == 0 {
		return math.MaxInt64
	}
	return tc.release + tc.period + tc.correction
}

// Late is how late the current cycle started: when the body was woken
// (or, catching up, resumed) minus Release; 0 for the first cycle.
// RT-safe.
func (tc *TaskContext) Late() time.Duration { return time.Duration(tc.wake - tc.release) }

// Missed is the number of releases that passed while the previous body
// ran or while the task slept held off its CPU (Xenomai's overruns_r),
// usually 0. With Skip they were dropped; with CatchUp this cycle and the
// ones after it run them back to back.
// RT-safe.
func (tc *TaskContext) Missed() int64 { return tc.missed }

// Overruns is the total number of releases missed so far (Stats.Overruns).
// RT-safe.
func (tc *TaskContext) Overruns() int64 { return tc.task.stats.overruns.Load() }

// Cycle is the number of releases so far: 0 during the first cycle.
// RT-safe.
func (tc *TaskContext) Cycle() int64 { return tc.cycle }

// Period is the task's period (0 if it is not periodic).
// RT-safe.
func (tc *TaskContext) Period() time.Duration { return time.Duration(tc.period) }

// Task is the task this context belongs to.
// RT-safe.
func (tc *TaskContext) Task() *Task { return tc.task }

// Stopping reports whether Stop was called; a non-periodic task polls it.
// RT-safe.
func (tc *TaskContext) Stopping() bool { return tc.task.ctl.Load()&ctlStop != 0 }

// Resync puts the next release one period from now; releases already
// missed are neither run nor counted (rtapi_task_self_resync).
// RT-safe.
func (tc *TaskContext) Resync() {
	if tc.period == 0 {
		return
	}
	now := tc.waker.Now()
	tc.pending = 0
	tc.release = now - tc.correction
	if !tc.oneshot {
		_ = tc.waker.Arm(now+tc.period, tc.period)
	}
}

// PLLReference is the current cycle's release time, which a PLL compares
// an external clock with (rtapi_task_pll_get_reference).
// RT-safe.
func (tc *TaskContext) PLLReference() int64 { return tc.release }

// SetPLLCorrection lengthens (positive) or shortens (negative) every
// following period by d, clamped to ±1 % of the period
// (rtapi_task_pll_set_correction). It returns the correction applied; the
// periodic-timer wake modes return ErrNotSupported.
// RT-safe.
func (tc *TaskContext) SetPLLCorrection(d time.Duration) (time.Duration, error) {
	if !tc.oneshot {
		return 0, errPLLNotOneshot
	}
	limit := int64(float64(tc.period) * PLLMaxCorrection)
	tc.correction = min(max(int64(d), -limit), limit)
	return time.Duration(tc.correction), nil
}

// errPLLNotOneshot is built once: SetPLLCorrection runs in task bodies.
var errPLLNotOneshot = &TaskError{Op: "pll correction", Err: ErrNotSupported}
