package latency

import (
	"fmt"
	"time"
)

// ThreadLine is one cyclictest status line's values; latencies in µs.
type ThreadLine struct {
	Index      int
	Tid        int
	Priority   int
	IntervalUS int64
	Cycles     int64
	Min        int64
	Act        int64
	Avg        int64
	Max        int64
	// Nsecs: the latencies are in ns (cyclictest -N), printed wider.
	Nsecs bool
}

// FormatThreadLine formats l exactly as cyclictest (rt-tests 2.x) prints a
// thread's line without -N:
//
//	T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld
//
// or with Nsecs, as cyclictest -N prints it:
//
//	T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%8ld Avg:%8ld Max:%8ld
func FormatThreadLine(l ThreadLine) string {
	if l.Nsecs {
		return fmt.Sprintf("T:%2d (%5d) P:%2d I:%d C:%7d Min:%7d Act:%8d Avg:%8d Max:%8d",
			l.Index, l.Tid, l.Priority, l.IntervalUS, l.Cycles, l.Min, l.Act, l.Avg, l.Max)
	}
	return fmt.Sprintf("T:%2d (%5d) P:%2d I:%d C:%7d Min:%7d Act:%5d Avg:%5d Max:%8d",
		l.Index, l.Tid, l.Priority, l.IntervalUS, l.Cycles, l.Min, l.Act, l.Avg, l.Max)
}

// LineOf builds a task's cyclictest line from its statistics.
func LineOf(index int, ts TaskStats) ThreadLine {
	lat := ts.Latency
	l := ThreadLine{
		Index:      index,
		Tid:        ts.Tid,
		Priority:   ts.Priority,
		IntervalUS: int64(ts.Period / time.Microsecond),
		Cycles:     lat.Count,
		Act:        micros(int64(ts.Act)),
	}
	if lat.Count > 0 {
		l.Min, l.Avg, l.Max = micros(int64(lat.Min)), micros(int64(lat.Sum)/lat.Count), micros(int64(lat.Max))
	}
	return l
}

// LineOfNs is LineOf with the latencies in ns, as cyclictest -N shows them.
func LineOfNs(index int, ts TaskStats) ThreadLine {
	lat := ts.Latency
	l := LineOf(index, ts)
	l.Nsecs, l.Act, l.Min, l.Avg, l.Max = true, max(0, int64(ts.Act)), 0, 0, 0
	if lat.Count > 0 {
		l.Min, l.Avg, l.Max = max(0, int64(lat.Min)), max(0, int64(lat.Sum)/lat.Count), max(0, int64(lat.Max))
	}
	return l
}

// micros converts ns to whole µs, clamping below 0 as cyclictest's
// unsigned fields would never show a negative.
func micros(ns int64) int64 { return max(0, ns/1000) }
