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
	"github.com/gortapi/gortapi/rtapi/sim"
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

// A Stats window never counts a late wake-up it did not measure, even
// when its mark was taken in the task body, between the wake-up and the
// end of the cycle (issue 36, item 10: "1 late of 0 measured"; the
// latency was recorded at the wake-up and the late count only when the
// cycle ended). On the sim flavor every wake-up is 100 µs late.
func TestStatsWindowFromBodyCountsNoUnmeasuredLate(t *testing.T) {
	t.Parallel()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	c, err := sim.New(rt)
	require.NoError(t, err)
	var marks []rtapi.Stats // one per cycle, each taken in the body
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "late", Period: time.Millisecond, LateThreshold: time.Microsecond},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() {
				marks = append(marks, tc.Task().Stats())
			}
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, c.SetTask(task, sim.TaskConfig{Jitter: sim.ConstantJitter(100 * time.Microsecond)}))
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(10*time.Millisecond+500*time.Microsecond)) // the task sleeps
	end := task.Stats()
	require.Positive(t, end.Latency.Count)
	require.Equal(t, end.Latency.Count, end.Interference.Late, "every wake-up is late")
	require.NotEmpty(t, marks)
	for i, mark := range marks {
		require.LessOrEqual(t, mark.Interference.Late, mark.Latency.Count, "mark %d", i)
		w, err := end.Since(mark)
		require.NoError(t, err)
		require.Equal(t, w.Latency.Count, w.Interference.Late,
			"window from mark %d: %d late of %d measured", i, w.Interference.Late, w.Latency.Count)
		if i > 0 {
			w, err := mark.Since(marks[i-1])
			require.NoError(t, err)
			require.Equal(t, int64(1), w.Latency.Count, "mark %d", i)
			require.Equal(t, w.Latency.Count, w.Interference.Late, "window from mark %d to %d", i-1, i)
		}
	}
}
