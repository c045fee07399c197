package rtapi

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// taskStats is written by the task's goroutine only and read from anywhere.
type taskStats struct {
	cycles     atomic.Int64
	overruns   atomic.Int64
	waitErrors atomic.Int64
	// wakeSeq is odd while a wake-up is recorded: its latency, late count
	// and cause (TaskContext.recordWakeup; a one-writer seqlock).
	wakeSeq     atomic.Uint64
	settled     atomic.Int64 // wakeups' reads that settled for a raced one
	latency     *hist.Histogram
	exec        *hist.Histogram
	tid         atomic.Int64
	minorFaults atomic.Int64
	majorFaults atomic.Int64
	voluntary   atomic.Int64
	involuntary atomic.Int64
	spinBreaks  atomic.Int64 // written by the guard's event reader
	intf        interferenceStats
	trace       traceStats // tracemark.go
}

func (s *taskStats) init(bound time.Duration) {
	s.latency = hist.New(time.Microsecond, bound)
	s.exec = hist.New(time.Microsecond, bound)
}

// Stats is a snapshot of a task's statistics.
type Stats struct {
	Name       string
	Period     time.Duration
	Cycles     int64
	Overruns   int64
	WaitErrors int64 // sleeps the kernel failed (should stay 0)
	// Latency is each wake-up's lateness (woken − release, cyclictest's
	// sample), Exec each body's run time: 1 µs buckets up to the task's
	// HistogramBound (go doc rtapi/hist.Snapshot).
	Latency hist.Snapshot
	Exec    hist.Snapshot
	// The thread's getrusage(RUSAGE_THREAD) counters, sampled about every
	// 100 ms and at the end; 0 on the sim flavor.
	MinorFaults         int64
	MajorFaults         int64
	VoluntarySwitches   int64
	InvoluntarySwitches int64
	// Interference counts what held the task up, cycle by cycle.
	Interference Interference
	// What the thread runs with. Policy is "SCHED_FIFO", "SCHED_OTHER"
	// (not real-time), or PolicyVirtual on the sim flavor, where Priority
	// is the task's virtual priority.
	Policy   string
	Priority int
	CPUs     []int
	Wake     string
	Degraded string
	// SpinBreaks counts the runtime guard's demotions of the task's
	// thread for keeping its CPU without a break or a completed cycle
	// (Options.RuntimeGuard).
	SpinBreaks int64
	// OwnP is "yes" when the runtime guard gave the task a P of its own
	// (GOMAXPROCS one higher while it runs), else "no: " and why; decided
	// when the task starts, empty before then.
	OwnP string
	// TraceMarks counts the markers the kernel took (TaskSpec.TraceMark);
	// TraceStopCycle is the cycle whose wake-up stopped tracing
	// (TaskSpec.TraceStop), 0 if none, TraceStopLatency how late it was.
	TraceMarks       int64
	TraceStopCycle   int64
	TraceStopLatency time.Duration
}

// Stats returns a snapshot of the task's statistics. It may be called from
// any goroutine at any time. It allocates.
func (t *Task) Stats() Stats {
	s := t.counters()
	t.stats.wakeups(func() {
		s.Interference = t.stats.intf.snapshot(t.spec.LateThreshold)
		s.Latency = t.stats.latency.Snapshot()
	})
	s.Exec = t.stats.exec.Snapshot()
	return s
}

// wakeupTries bounds wakeups' reads that raced a wake-up.
const wakeupTries = 64

// wakeups calls read, which reads the late counters then the latency
// histogram, until one call saw no wake-up recorded meanwhile, so that
// both count the same wake-ups and a Since window never has a late
// wake-up it did not measure. Against wake-ups faster than the read, 64
// times in a row, it settles for the last read, whose order still keeps
// Late within the histogram's Count.
func (s *taskStats) wakeups(read func()) {
	for try := 0; ; try++ {
		seq := s.wakeSeq.Load()
		if try == wakeupTries || seq&1 == 0 {
			read()
			if s.wakeSeq.Load() == seq {
				return
			}
			if try == wakeupTries {
				s.settled.Add(1)
				return
			}
		}
		runtime.Gosched()
	}
}

// StatsFolded returns the task's Stats with its histograms folded at upper
// (hist.Histogram.Fold), for a metrics exporter: it copies no buckets.
// The Stats' Latency and Exec have no Counts; their totals are the folds'.
// It may be called from any goroutine at any time. It allocates.
func (t *Task) StatsFolded(upper []time.Duration) (s Stats, latency, exec hist.Folded) {
	s = t.counters()
	t.stats.wakeups(func() {
		s.Interference = t.stats.intf.snapshot(t.spec.LateThreshold)
		latency = t.stats.latency.Fold(upper)
	})
	exec = t.stats.exec.Fold(upper)
	s.Latency = foldedSummary(latency, t.stats.latency.Width())
	s.Exec = foldedSummary(exec, t.stats.exec.Width())
	return s, latency, exec
}

func foldedSummary(f hist.Folded, width time.Duration) hist.Snapshot {
	return hist.Snapshot{Width: width, Overflow: f.Overflow, Count: f.Count, Sum: f.Sum, Min: f.Min, Max: f.Max}
}

// counters is Stats without the histograms and the interference counts
// (taskStats.wakeups reads those).
func (t *Task) counters() Stats {
	b := t.Binding()
	s := &t.stats
	st := Stats{
		Name:                t.spec.Name,
		Period:              t.spec.Period,
		Cycles:              s.cycles.Load(),
		Overruns:            s.overruns.Load(),
		WaitErrors:          s.waitErrors.Load(),
		MinorFaults:         s.minorFaults.Load(),
		MajorFaults:         s.majorFaults.Load(),
		VoluntarySwitches:   s.voluntary.Load(),
		InvoluntarySwitches: s.involuntary.Load(),
		Policy:              b.Policy,
		Priority:            b.Priority,
		CPUs:                b.CPUs,
		Wake:                b.Wake.String(),
		Degraded:            b.Degraded,
		OwnP:                t.ownPNote(),
		SpinBreaks:          s.spinBreaks.Load(),
	}
	st.TraceMarks = s.trace.marks.Load()
	st.TraceStopCycle = s.trace.stopCycle.Load()
	st.TraceStopLatency = time.Duration(s.trace.stopLatency.Load())
	return st
}

// MaxJitter is LinuxCNC latency-test's jitter: max − min latency.
func (s Stats) MaxJitter() time.Duration {
	if s.Latency.Count == 0 {
		return 0
	}
	return s.Latency.Max - s.Latency.Min
}

// Since returns the statistics of the cycles after mark, an earlier
// Stats of the same task:
//
//	mark := servo.Stats() // after warming up
//	...
//	window, err := servo.Stats().Since(mark)
//
// Counters are differences, Latency and Exec hist.Snapshot.Sub; what the
// thread runs with (Policy, CPUs, OwnP, ...) is the later value. It
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
	d.TraceMarks -= mark.TraceMarks
	if mark.TraceStopCycle != 0 { // tracing stopped before the window
		d.TraceStopCycle, d.TraceStopLatency = 0, 0
	}
	return d, nil
}

// policyName is Stats.Policy for a binding.
func policyName(b backend.Binding) string {
	if b.Virtual {
		return PolicyVirtual
	}
	return b.Policy.String()
}

// String returns the one-line summary the example programs print:
//
//	servo: SCHED_FIFO prio 90 wake posix-timer cycles 1000 overruns 0 latency min 3µs avg 5µs p99 9µs max 21µs
//
// p99 is the upper edge of a 1 µs bucket, capped at max. It allocates.
func (s Stats) String() string {
	var b strings.Builder
	writeStatsLine(&b, s, s.Name+":", 0, 0, 0, 0)
	return b.String()
}

// WriteStats writes one line per task, as String does but with no colon
// and the columns aligned, as examples/twotasks prints:
//
//	task-100µs     SCHED_FIFO prio 98 wake posix-timer cycles  10068 overruns  148 latency min 3.021µs avg 70.596µs p99 161µs max 214.739µs
//	task-1ms       SCHED_FIFO prio 97 wake posix-timer cycles   1004 overruns    2 latency min 9.48µs avg 65.496µs p99 180µs max 2.810166ms
//
// It returns the first write error. It allocates.
func WriteStats(w io.Writer, stats ...Stats) error {
	name, wake, cycles, overruns := 14, 11, 6, 4
	for _, s := range stats {
		name = max(name, utf8.RuneCountInString(s.Name))
		wake = max(wake, len(s.Wake))
		cycles = max(cycles, len(strconv.FormatInt(s.Cycles, 10)))
		overruns = max(overruns, len(strconv.FormatInt(s.Overruns, 10)))
	}
	var b strings.Builder
	for _, s := range stats {
		b.Reset()
		writeStatsLine(&b, s, s.Name, name, wake, cycles, overruns)
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

func writeStatsLine(b *strings.Builder, s Stats, name string, nameW, wakeW, cyclesW, overrunsW int) {
	p99, _ := s.Latency.Quantile(0.99) // a constant in (0, 1]: no error
	fmt.Fprintf(b, "%-*s %s prio %d wake %-*s cycles %*d overruns %*d latency min %v avg %v p99 %v max %v",
		nameW, name, s.Policy, s.Priority, wakeW, s.Wake, cyclesW, s.Cycles, overrunsW, s.Overruns,
		s.Latency.Min, s.Latency.Mean(), p99, s.Latency.Max)
}
