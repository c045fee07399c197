package rtapi

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// taskStats is written by the task's goroutine only (plain atomic stores)
// and read by Stats from anywhere.
type taskStats struct {
	cycles      atomic.Int64
	overruns    atomic.Int64
	waitErrors  atomic.Int64
	latency     *hist.Histogram
	exec        *hist.Histogram
	tid         atomic.Int64
	minorFaults atomic.Int64
	majorFaults atomic.Int64
	voluntary   atomic.Int64
	involuntary atomic.Int64
	intf        interferenceStats
}

func (s *taskStats) init(bound time.Duration) {
	s.latency = hist.New(time.Microsecond, bound)
	s.exec = hist.New(time.Microsecond, bound)
}

// Stats is a snapshot of a task's statistics. Latency is the wake-up
// lateness of each release (woken − scheduled release, cyclictest's
// sample); Exec is the time the body took each cycle (its jitter shows
// interference such as an hrtimer storm).
type Stats struct {
	Name     string
	Period   time.Duration
	Cycles   int64
	Overruns int64
	// WaitErrors counts sleeps the kernel failed (should stay 0).
	WaitErrors int64
	// Latency is the wake-up lateness of each cycle, Exec its execution
	// time: 1 µs buckets up to the task's HistogramBound, an overflow
	// count, and exact count, sum, minimum and maximum
	// (go doc rtapi/hist.Snapshot).
	Latency hist.Snapshot
	Exec    hist.Snapshot
	// Counters of the task's thread from getrusage(RUSAGE_THREAD),
	// sampled about every 100 ms and when the task ends; always 0 on
	// the sim flavor.
	MinorFaults         int64
	MajorFaults         int64
	VoluntarySwitches   int64
	InvoluntarySwitches int64
	// Interference counts, cycle by cycle, what the kernel and the Go
	// runtime did to the task (preemptions, scheduler parks, GC, page
	// faults) and attributes late wake-ups to them; see Interference.
	Interference Interference
	// Policy, Priority, CPUs, Wake and Degraded: what the thread runs with.
	Policy   string
	Priority int
	CPUs     []int
	Wake     string
	Degraded string
	// GCShield says whether the task's sleeps keep their P ("on"), and
	// if not, why ("off: ..."): the shield is off for this task, its
	// period is under GCShieldMinPeriod, or no P is left for it (see
	// TaskSpec.GCShield). It changes when another task starts or ends,
	// but not once RT.Close has begun: after Close it is what the task
	// had while the set ran. Empty before the task starts.
	GCShield string
}

// Stats returns a snapshot of the task's statistics. It may be called from
// any goroutine at any time (it allocates; not RT-safe).
func (t *Task) Stats() Stats {
	b := t.Binding()
	s := &t.stats
	// The late wake-ups before the latency histogram: each late one was
	// recorded there first, so Late never exceeds Latency.Count.
	intf := s.intf.snapshot(t.spec.LateThreshold)
	return Stats{
		Name:                t.spec.Name,
		Period:              t.spec.Period,
		Cycles:              s.cycles.Load(),
		Overruns:            s.overruns.Load(),
		WaitErrors:          s.waitErrors.Load(),
		Latency:             s.latency.Snapshot(),
		Exec:                s.exec.Snapshot(),
		MinorFaults:         s.minorFaults.Load(),
		MajorFaults:         s.majorFaults.Load(),
		VoluntarySwitches:   s.voluntary.Load(),
		InvoluntarySwitches: s.involuntary.Load(),
		Interference:        intf,
		Policy:              b.Policy.String(),
		Priority:            b.Priority,
		CPUs:                b.CPUs,
		Wake:                b.Wake.String(),
		Degraded:            b.Degraded,
		GCShield:            t.shieldNote(),
	}
}

// MaxJitter is LinuxCNC latency-test's jitter: how far the interval
// between two releases strayed from the period, estimated from the
// latency extremes (max latency − min latency).
func (s Stats) MaxJitter() time.Duration {
	if s.Latency.Count == 0 {
		return 0
	}
	return s.Latency.Max - s.Latency.Min
}

// Since returns the statistics of the cycles after mark, an earlier
// Stats of the same task: what happened since the task settled, or in one
// window of a long run.
//
//	mark := servo.Stats() // after warming up
//	...
//	window, err := servo.Stats().Since(mark)
//
// Counters are differences; Latency and Exec are hist.Snapshot.Sub (exact
// counts, extremes to bucket resolution unless a new one was set); what the
// thread runs with (Policy, CPUs, GCShield, ...) is the later value. It
// fails with ErrInvalid when mark is of another task or is not earlier.
func (s Stats) Since(mark Stats) (Stats, error) {
	if mark.Name != s.Name || mark.Cycles > s.Cycles {
		return Stats{}, fmt.Errorf("rtapi: Stats.Since: mark of task %q at cycle %d is not an earlier Stats of task %q (cycle %d): %w",
			mark.Name, mark.Cycles, s.Name, s.Cycles, ErrInvalid)
	}
	lat, err := s.Latency.Sub(mark.Latency)
	if err != nil {
		return Stats{}, fmt.Errorf("rtapi: Stats.Since: latency: %v: %w", err, ErrInvalid)
	}
	exec, err := s.Exec.Sub(mark.Exec)
	if err != nil {
		return Stats{}, fmt.Errorf("rtapi: Stats.Since: exec: %v: %w", err, ErrInvalid)
	}
	d := s
	d.Cycles -= mark.Cycles
	d.Overruns -= mark.Overruns
	d.WaitErrors -= mark.WaitErrors
	d.Latency, d.Exec = lat, exec
	d.MinorFaults -= mark.MinorFaults
	d.MajorFaults -= mark.MajorFaults
	d.VoluntarySwitches -= mark.VoluntarySwitches
	d.InvoluntarySwitches -= mark.InvoluntarySwitches
	d.Interference = s.Interference.since(mark.Interference)
	return d, nil
}
