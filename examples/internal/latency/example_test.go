package latency_test

import (
	"fmt"

	"github.com/gortapi/gortapi/examples/internal/latency"
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
