package rtapi_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
)

func TestStatsString(t *testing.T) {
	t.Parallel()
	h := hist.New(time.Microsecond, 100*time.Microsecond)
	for _, us := range []time.Duration{3, 5, 21} {
		h.Record(us * time.Microsecond)
	}
	s := rtapi.Stats{Name: "servo", Policy: "SCHED_FIFO", Priority: 90, Wake: "posix-timer", Cycles: 1000, Latency: h.Snapshot()}
	assert.Equal(t, "servo: SCHED_FIFO prio 90 wake posix-timer cycles 1000 overruns 0 latency min 3µs avg 9.666µs p99 21µs max 21µs", s.String())

	var b bytes.Buffer
	long := s
	long.Name, long.Cycles, long.Overruns, long.Policy, long.Priority = "a-very-long-task-name", 12345678, 3, "SCHED_OTHER", 0
	require.NoError(t, rtapi.WriteStats(&b, s, long))
	assert.Equal(t, ""+
		"servo                 SCHED_FIFO prio 90 wake posix-timer cycles     1000 overruns    0 latency min 3µs avg 9.666µs p99 21µs max 21µs\n"+
		"a-very-long-task-name SCHED_OTHER prio 0 wake posix-timer cycles 12345678 overruns    3 latency min 3µs avg 9.666µs p99 21µs max 21µs\n",
		b.String())

	f, err := os.Open(os.DevNull) // read-only: every write fails
	require.NoError(t, err)
	defer f.Close()
	assert.Error(t, rtapi.WriteStats(f, s))
}

// WriteStats prints the summary the example programs print, one aligned
// line per task; String prints one task's.
func ExampleWriteStats() {
	latency := func(us ...time.Duration) hist.Snapshot {
		h := hist.New(time.Microsecond, 100*time.Microsecond)
		for _, d := range us {
			h.Record(d * time.Microsecond)
		}
		return h.Snapshot()
	}
	fast := rtapi.Stats{Name: "task-100µs", Policy: "SCHED_FIFO", Priority: 98, Wake: "posix-timer",
		Cycles: 10068, Overruns: 148, Latency: latency(3, 60, 161)}
	slow := rtapi.Stats{Name: "task-1ms", Policy: "SCHED_FIFO", Priority: 97, Wake: "posix-timer",
		Cycles: 1004, Overruns: 2, Latency: latency(9, 65, 180)}
	_ = rtapi.WriteStats(os.Stdout, fast, slow)
	fmt.Println(slow)
	// Output:
	// task-100µs     SCHED_FIFO prio 98 wake posix-timer cycles  10068 overruns  148 latency min 3µs avg 74.666µs p99 161µs max 161µs
	// task-1ms       SCHED_FIFO prio 97 wake posix-timer cycles   1004 overruns    2 latency min 9µs avg 84.666µs p99 180µs max 180µs
	// task-1ms: SCHED_FIFO prio 97 wake posix-timer cycles 1004 overruns 2 latency min 9µs avg 84.666µs p99 180µs max 180µs
}
