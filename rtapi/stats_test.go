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

// On sim a task runs on a virtual clock by virtual priority: Stats says
// "virtual", as the tools print it, not the host thread's SCHED_OTHER.
func TestSimStatsPolicyIsVirtual(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	defer rt.Close()
	clock, err := sim.New(rt)
	require.NoError(t, err)
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Priority: 90}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, clock.RunCycles(task, 2))
	st := task.Stats()
	assert.Equal(t, rtapi.PolicyVirtual, st.Policy)
	assert.Equal(t, 90, st.Priority)
	assert.Contains(t, st.String(), "servo: virtual prio 90 ")
}

// WriteStats prints the summary the example programs print, one aligned
// line per task; here two tasks on the sim flavor's virtual clock.
func ExampleWriteStats() {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	clock, _ := sim.New(rt)
	fast, _ := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "task-100µs", Period: 100 * time.Microsecond}, func(*rtapi.Cycle) {})
	slow, _ := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "task-1ms", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	_ = clock.SetTask(fast, sim.TaskConfig{Jitter: sim.ConstantJitter(3 * time.Microsecond)})
	_ = clock.SetTask(slow, sim.TaskConfig{Jitter: sim.ConstantJitter(9 * time.Microsecond)})
	_ = fast.Start()
	_ = slow.Start()
	if err := clock.Advance(10 * time.Millisecond); err != nil {
		fmt.Println(err)
		return
	}
	_ = rtapi.WriteStats(os.Stdout, fast.Stats(), slow.Stats())
	fmt.Println(slow.Stats())
	// Output:
	// task-100µs     virtual prio 98 wake nanosleep   cycles     99 overruns    0 latency min 3µs avg 3µs p99 3µs max 3µs
	// task-1ms       virtual prio 98 wake nanosleep   cycles      9 overruns    0 latency min 9µs avg 9µs p99 9µs max 9µs
	// task-1ms: virtual prio 98 wake nanosleep cycles 9 overruns 0 latency min 9µs avg 9µs p99 9µs max 9µs
}
