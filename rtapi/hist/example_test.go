package hist_test

import (
	"fmt"
	"time"

	"github.com/gortapi/gortapi/rtapi/hist"
)

// A task's latency histogram: one writer (the task) records, anyone reads
// a snapshot; Sub gives what happened since a mark.
func Example() {
	h := hist.New(time.Microsecond, 100*time.Microsecond) // 1 µs buckets up to 100 µs
	for _, us := range []time.Duration{12, 15, 15, 18, 250} {
		h.Record(us * time.Microsecond) // RT-safe
	}
	s := h.Snapshot()
	fmt.Println(s.Count, "samples,", s.Overflow, "past the bound; min", s.Min, "max", s.Max, "mean", s.Mean())
	p50, _ := s.Quantile(0.5) // a fraction in (0, 1]; Quantile(99) is ErrInvalid
	p99, _ := s.Quantile(0.99)
	fmt.Println("p50", p50, "p99", p99)

	mark := s
	h.Record(40 * time.Microsecond)
	since, _ := h.Snapshot().Sub(mark)
	fmt.Println(since.Count, "since the mark, in", since.Min, "..", since.Max)
	// Output:
	// 5 samples, 1 past the bound; min 12µs max 250µs mean 62µs
	// p50 16µs p99 250µs
	// 1 since the mark, in 40µs .. 41µs
}
