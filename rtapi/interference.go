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

// observe accounts the cycle that just ended, the previous wake-up then
// the body. It runs before the sleep, so that its cost falls in the slack;
// getrusage is read only after a late wake-up, every sampleEvery cycles,
// or every cycle with Interference On.
// RT-safe.
func (tc *TaskContext) observe() {
	in := &tc.task.stats.intf
	if !tc.counters {
		if tc.slept && tc.latency > tc.lateThreshold {
			in.late.Store(in.late.Load() + 1)
		}
		tc.slept = false
		return
	}
	gcEnd := GCMarking()
	if tc.gcAtStart || gcEnd {
		in.gc.Store(in.gc.Load() + 1)
	}
	late := tc.slept && tc.latency > tc.lateThreshold
	gcWake := tc.gcAtEnd || tc.gcAtStart // marking as the sleep began or at the wake-up
	tc.gcAtEnd = gcEnd
	tc.slept = false
	if late || tc.exactInterference || tc.cycle >= tc.nextRead {
		tc.readInterference(late, gcWake)
	}
}

// readInterference reads the thread's counters and accounts the cycles
// since the previous read: each event beyond the waker's sleeps (one
// voluntary switch each) counts one cycle, at most one per cycle.
func (tc *TaskContext) readInterference(late, gcWake bool) {
	prev := tc.usage
	if sys.ReadThreadUsage(&tc.usage) != nil {
		return
	}
	sleeps := tc.waker.Sleeps()
	cycles := max(tc.cycle-tc.readCycle, 1)
	expect := sleeps - tc.readSleeps
	tc.readCycle, tc.readSleeps = tc.cycle, sleeps
	tc.nextRead = tc.cycle + tc.sampleEvery

	s := &tc.task.stats
	in := &s.intf
	u := &tc.usage
	preempted := u.InvoluntarySwitches - prev.InvoluntarySwitches
	blocked := u.VoluntarySwitches - prev.VoluntarySwitches - expect
	faults := u.MinorFaults + u.MajorFaults - prev.MinorFaults - prev.MajorFaults
	if preempted > 0 {
		in.preempted.Store(in.preempted.Load() + min(preempted, cycles))
	}
	if blocked > 0 {
		in.blocked.Store(in.blocked.Load() + min(blocked, cycles))
	}
	if faults > 0 {
		in.faults.Store(in.faults.Load() + min(faults, cycles))
	}
	if late {
		in.late.Store(in.late.Load() + 1)
		switch {
		case blocked > 0:
			in.lateBlocked.Store(in.lateBlocked.Load() + 1)
		case preempted > 0:
			in.latePreempted.Store(in.latePreempted.Load() + 1)
		case gcWake:
			in.lateGC.Store(in.lateGC.Load() + 1)
		default:
			in.unexplained.Store(in.unexplained.Load() + 1)
		}
	}
	s.minorFaults.Store(u.MinorFaults)
	s.majorFaults.Store(u.MajorFaults)
	s.voluntary.Store(u.VoluntarySwitches)
	s.involuntary.Store(u.InvoluntarySwitches)
}
