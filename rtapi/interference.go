package rtapi

import (
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Interference counts what the kernel and the Go runtime did to a task,
// cycle by cycle: the Go analog of Xenomai's mode-switch counter. A cycle
// here is one body run plus the sleep and wake-up that follow it.
//
// The counters come from one getrusage(RUSAGE_THREAD) per cycle (about a
// microsecond) and a load of the runtime's GC flag; TaskSpec.Interference
// turns them off.
//
// There is no per-goroutine allocation counter in the Go runtime, so no
// cheap exact "the body allocated" count exists. What allocation costs a
// real-time task shows here instead: FaultCycles (fresh memory touched),
// BlockedCycles (a stop-the-world or mark-assist park), GCCycles. Prove a
// body allocation-free with testing.AllocsPerRun around one cycle in a
// test, as rtapi's own tests do.
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
	if !tc.interference {
		return
	}
	_ = sys.ReadThreadUsage(&tc.usage)
	tc.gcAtStart = gcMarking()
	tc.gcAtEnd = tc.gcAtStart
	tc.nextSample = 1<<63 - 1 // the per-cycle reads keep the totals current
}

// observe runs as a body ends, before the sleep, so that its cost falls
// in the cycle's slack rather than between a wake-up and the body. It
// accounts the window since the previous call: the previous sleep and
// wake-up (tc.slept, tc.latency), then the body that just ran; a late
// wake-up is thus attributed one body later.
//
// RT-safe: no allocation, no lock; one getrusage system call, made raw
// (x/sys issues it without entering the Go scheduler's syscall state).
func (tc *TaskContext) observe() {
	prev := tc.usage
	gcEnd := gcMarking()
	if sys.ReadThreadUsage(&tc.usage) != nil {
		return
	}
	s := &tc.task.stats
	in := &s.intf
	u := &tc.usage
	expect := int64(0)
	if tc.slept {
		expect = 1
	}
	preempted := u.InvoluntarySwitches > prev.InvoluntarySwitches
	blocked := u.VoluntarySwitches-prev.VoluntarySwitches > expect
	gcWake := tc.gcAtEnd || tc.gcAtStart // marking as the sleep began or at the wake-up
	if preempted {
		in.preempted.Store(in.preempted.Load() + 1)
	}
	if blocked {
		in.blocked.Store(in.blocked.Load() + 1)
	}
	if tc.gcAtStart || gcEnd {
		in.gc.Store(in.gc.Load() + 1)
	}
	if u.MinorFaults+u.MajorFaults > prev.MinorFaults+prev.MajorFaults {
		in.faults.Store(in.faults.Load() + 1)
	}
	if tc.slept && tc.latency > tc.lateThreshold {
		in.late.Store(in.late.Load() + 1)
		switch {
		case blocked:
			in.lateBlocked.Store(in.lateBlocked.Load() + 1)
		case preempted:
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
	tc.gcAtEnd = gcEnd
	tc.slept = false
}
