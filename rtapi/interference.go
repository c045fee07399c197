package rtapi

import (
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Interference counts what the kernel and the Go runtime did to a task,
// cycle by cycle (a body run plus the sleep and wake-up that follow): the
// Go analog of Xenomai's mode-switch counter. The counts come from the
// thread's getrusage(RUSAGE_THREAD) and the runtime's GC flag.
//
// With TaskSpec.Interference Auto, getrusage is read after a late
// wake-up, about every 100 ms and when the task ends: the *Cycles counts
// then count at most one per window and may lag up to 100 ms. On reads it
// every cycle; Off turns the counters off. Allocation is not counted: it
// shows as FaultCycles, BlockedCycles and GCCycles (docs/GC.md,
// "Interference counters").
type Interference struct {
	// PreemptedCycles: the thread was switched out involuntarily.
	PreemptedCycles int64
	// BlockedCycles: the thread blocked beyond its sleep: the Go
	// scheduler parked it (no P, a stop-the-world), or the body blocked.
	BlockedCycles int64
	// GCCycles: a GC cycle was marking as the body started or ended, or
	// at the wake-up.
	GCCycles    int64
	FaultCycles int64 // page faults
	// Late counts wake-ups later than LateThreshold, each attributed to
	// the first cause that applies: Blocked, Preempted, GC, or
	// Unexplained (timer slack, interrupts, hypervisor steal). On the sim
	// flavor only Late is counted.
	LateThreshold   time.Duration
	Late            int64
	LateBlocked     int64
	LatePreempted   int64
	LateGC          int64
	LateUnexplained int64
}

// interferenceStats is written by the task's goroutine only.
type interferenceStats struct {
	preempted, blocked, gc, faults                        atomic.Int64
	late, lateBlocked, latePreempted, lateGC, unexplained atomic.Int64
}

// since is i less the counts of mark.
func (i Interference) since(mark Interference) Interference {
	i.PreemptedCycles -= mark.PreemptedCycles
	i.BlockedCycles -= mark.BlockedCycles
	i.GCCycles -= mark.GCCycles
	i.FaultCycles -= mark.FaultCycles
	i.Late -= mark.Late
	i.LateBlocked -= mark.LateBlocked
	i.LatePreempted -= mark.LatePreempted
	i.LateGC -= mark.LateGC
	i.LateUnexplained -= mark.LateUnexplained
	return i
}

func (s *interferenceStats) snapshot(threshold time.Duration) Interference {
	return Interference{
		PreemptedCycles: s.preempted.Load(),
		BlockedCycles:   s.blocked.Load(),
		GCCycles:        s.gc.Load(),
		FaultCycles:     s.faults.Load(),
		LateThreshold:   threshold,
		Late:            s.late.Load(),
		LateBlocked:     s.lateBlocked.Load(),
		LatePreempted:   s.latePreempted.Load(),
		LateGC:          s.lateGC.Load(),
		LateUnexplained: s.unexplained.Load(),
	}
}

// DefaultLateThreshold returns the late wake-up threshold for a period: a
// tenth of it, at least 50 µs.
func DefaultLateThreshold(period time.Duration) time.Duration {
	return max(period/10, 50*time.Microsecond)
}

// interferenceOn resolves TaskSpec.Interference (Auto: on).
func interferenceOn(spec TaskSpec) bool { return spec.Interference != Off }

// startInterference takes the thread's baseline counters before the first
// cycle. Called on the task's thread.
func (tc *TaskContext) startInterference() {
	if !tc.interference || !tc.counters {
		return
	}
	_ = sys.ReadThreadUsage(&tc.usage)
	tc.gcAtStart = GCMarking()
	tc.gcAtEnd = tc.gcAtStart
	tc.nextRead = tc.sampleEvery
	tc.nextSample = 1<<63 - 1 // the reads here keep the totals current
}

// observe accounts the body that just ended. It runs before the sleep, so
// that its cost falls in the slack; getrusage is read every sampleEvery
// cycles, or every cycle with Interference On (and at once after a late
// wake-up: lateCause).
// RT-safe.
func (tc *TaskContext) observe() {
	if !tc.counters {
		return // a late wake-up is all that is counted: recordWakeup
	}
	in := &tc.task.stats.intf
	gcEnd := GCMarking()
	if tc.gcAtStart || gcEnd {
		in.gc.Store(in.gc.Load() + 1)
	}
	tc.gcAtEnd = gcEnd
	if tc.exactInterference || tc.cycle >= tc.nextRead {
		tc.readInterference(tc.cycle)
	}
}

// lateCause reads the thread's counters at a late wake-up, accounts them
// to the cycle it starts, and returns the counter of the cause the
// wake-up is attributed to: the first that applies of Blocked, Preempted,
// GC and Unexplained. It returns nil on a virtual clock.
// RT-safe.
func (tc *TaskContext) lateCause() *atomic.Int64 {
	if !tc.counters {
		return nil
	}
	in := &tc.task.stats.intf
	gcWake := tc.gcAtEnd || GCMarking() // marking as the sleep began or at the wake-up
	preempted, blocked, ok := tc.readInterference(tc.cycle + 1)
	switch {
	case ok && blocked > 0:
		return &in.lateBlocked
	case ok && preempted > 0:
		return &in.latePreempted
	case gcWake:
		return &in.lateGC
	}
	return &in.unexplained
}

// What the reads of one cycle counted (TaskContext.readCounted).
const (
	countedPreempted uint8 = 1 << iota
	countedBlocked
	countedFaults
)

// readInterference reads the thread's counters at cycle and accounts the
// cycles since the previous read: each event beyond the waker's sleeps
// (one voluntary switch each) counts one cycle, at most one per cycle,
// also when a cycle is read twice (at a late wake-up and at its end). It
// returns the involuntary switches and the blocking it saw; ok is false
// when getrusage failed.
func (tc *TaskContext) readInterference(cycle int64) (preempted, blocked int64, ok bool) {
	prev := tc.usage
	if sys.ReadThreadUsage(&tc.usage) != nil {
		return 0, 0, false
	}
	sleeps := tc.waker.Sleeps()
	expect := sleeps - tc.readSleeps
	cycles, counted := cycle-tc.readCycle, tc.readCounted
	if cycles > 0 {
		counted = 0 // a new cycle
	} else {
		cycles = 1 // the cycle of the previous read, or the first
	}
	tc.readCycle, tc.readSleeps = max(tc.readCycle, cycle), sleeps
	tc.nextRead = tc.readCycle + tc.sampleEvery

	s := &tc.task.stats
	in := &s.intf
	u := &tc.usage
	preempted = u.InvoluntarySwitches - prev.InvoluntarySwitches
	blocked = u.VoluntarySwitches - prev.VoluntarySwitches - expect
	faults := u.MinorFaults + u.MajorFaults - prev.MinorFaults - prev.MajorFaults
	countCycles(&in.preempted, preempted, cycles, countedPreempted, &counted)
	countCycles(&in.blocked, blocked, cycles, countedBlocked, &counted)
	countCycles(&in.faults, faults, cycles, countedFaults, &counted)
	tc.readCounted = counted
	s.minorFaults.Store(u.MinorFaults)
	s.majorFaults.Store(u.MajorFaults)
	s.voluntary.Store(u.VoluntarySwitches)
	s.involuntary.Store(u.InvoluntarySwitches)
	return preempted, blocked, true
}

// countCycles adds to c the cycles that saw events: at most cycles, less
// the last one when a read of it counted already (bit in counted).
func countCycles(c *atomic.Int64, events, cycles int64, bit uint8, counted *uint8) {
	if events <= 0 {
		return
	}
	n := min(events, cycles)
	if *counted&bit != 0 {
		n--
	}
	*counted |= bit
	if n > 0 {
		c.Store(c.Load() + n)
	}
}
