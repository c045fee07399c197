package latency_test

import (
	"fmt"
	"os"
	"time"

	"github.com/gortapi/gortapi/examples/internal/latency"
	"github.com/gortapi/gortapi/internal/hist"
)

// A task's statistics as cyclictest prints them, so scripts written for
// cyclictest keep working.
func ExampleFormatThreadLine() {
	fmt.Println(latency.FormatThreadLine(latency.ThreadLine{
		Index: 0, Tid: 4242, Priority: 98, IntervalUS: 1000, Cycles: 10000, Min: 3, Act: 5, Avg: 6, Max: 41,
	}))
	// Output:
	// T: 0 ( 4242) P:98 I:1000 C:  10000 Min:      3 Act:    5 Avg:    6 Max:      41
}

// The histogram file layout of cyclictest -h / --histfile.
func ExampleWriteHistogram() {
	h := hist.New(time.Microsecond, 4*time.Microsecond)
	for _, ns := range []int64{1_200, 1_900, 2_500, 9_000} {
		h.Record(ns)
	}
	latency.WriteHistogram(os.Stdout, []hist.Snapshot{h.Snapshot()})
	// Output:
	// # Histogram
	// 000000 000000
	// 000001 000002
	// 000002 000001
	// 000003 000000
	// # Total: 000000003
	// # Min Latencies: 00001
	// # Avg Latencies: 00003
	// # Max Latencies: 00009
	// # Histogram Overflows: 00001
	// # Histogram Overflow at cycle number:
	// # Thread 0: # 00001 others
}
