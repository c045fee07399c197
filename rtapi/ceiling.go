package rtapi

import (
	"sync"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
)

// The wake-up ceiling (docs/GC.md, "The wake-up ceiling"): under the
// runtime guard, a SCHED_FIFO task below the highest priority of the
// process's real-time tasks sleeps at that highest priority and goes back
// to its own once the Go runtime has it running again. Waking up in Go
// (exitsyscall) can take another task's P back from under it, holding
// that task's goroutine meanwhile; a task of higher priority that woke on
// the same CPU would preempt the holder and spin on its own goroutine
// until the guard demoted it (3 ms and more). At the ceiling no task
// preempts another inside that path.

// ceilingBoard counts the priorities of the tasks that take part; one per
// process (wakeCeiling), since the tasks of every RT share the runtime's
// Ps.
type ceilingBoard struct {
	mu    sync.Mutex
	count [sys.FIFOPrioMax + 1]int32 // tasks counted at each priority
	top   atomic.Int32               // the highest priority counted; 0 for none
}

var wakeCeiling ceilingBoard

// add counts a task at prio and reports whether it did: false for a
// priority outside SCHED_FIFO's range.
func (b *ceilingBoard) add(prio int) bool {
	if prio < sys.FIFOPrioMin || prio > sys.FIFOPrioMax {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count[prio]++
	if int32(prio) > b.top.Load() {
		b.top.Store(int32(prio))
	}
	return true
}

// remove uncounts a task that add counted at prio.
func (b *ceilingBoard) remove(prio int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.count[prio] == 0 {
		panic("rtapi: wake-up ceiling: remove without add")
	}
	b.count[prio]--
	top := 0
	for p := sys.FIFOPrioMax; p >= sys.FIFOPrioMin; p-- {
		if b.count[p] > 0 {
			top = p
			break
		}
	}
	b.top.Store(int32(top))
}

// raiseToCeiling sets the task's thread to the ceiling before a sleep,
// when the task takes part, a task above it runs, and the watchdog has
// not faulted it; it reports whether it did.
// RT-safe.
func (tc *TaskContext) raiseToCeiling() bool {
	if tc.ceilPrio == 0 {
		return false
	}
	top := wakeCeiling.top.Load()
	if top <= tc.ceilPrio || tc.task.ctl.Load()&ctlFault != 0 {
		return false
	}
	return sys.SetSelfSchedulerRaw(sys.SchedFIFO, int(top))
}

// lowerFromCeiling sets the thread back to the task's own priority after
// a sleep raiseToCeiling began, or to SCHED_OTHER when the watchdog
// faulted the task meanwhile (its guard demoted the thread for good).
// RT-safe.
func (tc *TaskContext) lowerFromCeiling() {
	if tc.task.ctl.Load()&ctlFault != 0 {
		sys.SetSelfSchedulerRaw(sys.SchedOther, 0)
		return
	}
	sys.SetSelfSchedulerRaw(sys.SchedFIFO, int(tc.ceilPrio))
}
