package rtapi

import (
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Interference counts what the kernel and the Go runtime did to a task,
// cycle by cycle: the Go analog of Xenomai's mode-switch counter. A cycle
// is one body run plus the sleep and wake-up that follow it.
//
// The counters come from the thread's getrusage(RUSAGE_THREAD) and the
// runtime's GC flag. With TaskSpec.Interference Auto, getrusage is read
// after a late wake-up (to attribute it), about every 100 ms and when the
// task ends: PreemptedCycles, BlockedCycles and FaultCycles then count at
// most one event per window, and a snapshot of a running task may be up to
// 100 ms behind. On reads every cycle and counts exactly; Off turns the
// counters off.
//
// The Go runtime has no cheap per-goroutine allocation counter. What
// allocation costs a task shows as FaultCycles, BlockedCycles and
// GCCycles; prove a body allocation-free with testing.AllocsPerRun.
type Interference struct {
	// PreemptedCycles: cycles in which the task's thread was switched out
	// involuntarily (ru_nivcsw grew): a higher-priority thread, an
	// interrupt thread, or the kernel took its CPU.
	PreemptedCycles int64
	// BlockedCycles: cycles in which the thread blocked more often than
	// its one sleep (ru_nvcsw grew by more than the sleeps): the Go
	// scheduler parked it, waiting for a P after the wake-up (exitsyscall)
	// or stopped for a stop-the-world, or the body itself blocked.
	BlockedCycles int64
	// GCCycles: cycles during which a garbage-collection cycle was
	// marking (at the start or end of the body, or at the wake-up).
	GCCycles int64
	// FaultCycles: cycles in which the thread took page faults.
	FaultCycles int64
	// LateThreshold is the wake-up latency above which a wake-up counts
	// as late; Late counts them, and each late wake-up is attributed to
	// one cause, the first that applies: Blocked (the Go scheduler parked
	// the thread), Preempted, GC (marking while it slept or woke), or
	// Unexplained (the kernel or the host: timer slack, interrupts,
	// hypervisor steal). On the sim flavor only Late is counted: the
	// injected jitter is the only lateness in virtual time, and the
	// thread counters above stay 0.
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
	tc.gcAtStart = gcMarking()
	tc.gcAtEnd = tc.gcAtStart
	tc.nextRead = tc.sampleEvery
	tc.nextSample = 1<<63 - 1 // the reads here keep the totals current
}

// observe runs as a body ends, before the sleep, so that its cost falls
// in the cycle's slack rather than between a wake-up and the body. It
// accounts the cycle that just ended: the previous sleep and wake-up
// (tc.slept, tc.latency), then the body; a late wake-up is thus
// attributed one body later.
//
// The GC flag is read every cycle; the thread's getrusage counters, a
// raw system call, only after a late wake-up and every sampleEvery cycles
// (every cycle with TaskSpec.Interference On).
// RT-safe.
func (tc *TaskContext) observe() {
	in := &tc.task.stats.intf
	if !tc.counters {
		// A virtual clock: the injected jitter is the only cause.
		if tc.slept && tc.latency > tc.lateThreshold {
			in.late.Store(in.late.Load() + 1)
		}
		tc.slept = false
		return
	}
	gcEnd := gcMarking()
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

// readInterference reads the thread's counters and accounts the window
// since the previous read: cycles (readCycle, cycle], and the kernel
// sleeps the waker made in it, each of which is one voluntary switch.
// Whatever the thread did beyond them in the window counts as one
// interfered cycle per event, at most one per cycle of the window: exact
// when the window is one cycle, which it is for a late wake-up that
// follows a clean stretch, and for every cycle with Interference On.
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
