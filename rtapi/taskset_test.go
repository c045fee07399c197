package rtapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// sink keeps the allocations of TestTaskSetNeverStalls alive long enough
// to be garbage the collector has to find.
var sink []byte

// TestTaskSetNeverStalls runs issue 19's set — tasks at 50, 550 and
// 1050 µs, SCHED_FIFO 80, 79 and 78 — beside a goroutine that allocates as
// fast as it can, and checks that every task keeps completing cycles and
// ends without an error. Here the kernel's RT throttling would end any livelock
// within a second, so the test only counts; the real-kernel lane
// (.ci/realkernel.sh) runs it in a guest with sched_rt_runtime_us=-1,
// where a livelock never ends and the guest's hard timeout fails the run.
func TestTaskSetNeverStalls(t *testing.T) {
	rttest.RequireRT(t)
	rt := open(t, rtapi.Options{Flavor: "rt-preempt"})
	periods := []time.Duration{50 * time.Microsecond, 550 * time.Microsecond, 1050 * time.Microsecond}
	var tasks []*rtapi.Task
	for i, p := range periods {
		task, err := rt.NewTask(rtapi.TaskSpec{
			Name: []string{"base", "servo", "slow"}[i], Period: p, Priority: min(80-i, rt.PrioHighest()),
			Overrun: rtapi.Skip,
			// No watchdog: it would end a livelock the test must see as
			// tasks that stop counting, and in the real-kernel lane's
			// emulated guest it faulted base over a 76 ms stall of the
			// emulator (its 50 ms timeout), which the test then read as
			// a set that stopped.
			Watchdog: -1,
		}, loop)
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		require.NoError(t, task.Start())
	}
	// Allocate: the collector's workers and its stack scans of the task
	// goroutines are what the runtime's spins wait on.
	stop := make(chan struct{})
	allocDone := make(chan struct{})
	go func() {
		defer close(allocDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for range 64 {
				sink = make([]byte, 64<<10)
			}
		}
	}()
	// Each task must complete cycles in each of 3 rounds: a set that
	// locked up stops counting.
	for round := 0; round < 3; round++ {
		var before []int64
		for _, task := range tasks {
			before = append(before, task.Stats().Cycles)
		}
		for i, task := range tasks {
			rttest.WaitFor(t, task.Spec().Name+" to complete more cycles", func() bool {
				return task.Stats().Cycles >= before[i]+100
			})
		}
	}
	close(stop)
	<-allocDone
	for _, task := range tasks {
		st := task.Stats()
		t.Logf("%s: %d cycles, max wake-up %v, spin breaks %d", st.Name, st.Cycles, st.Latency.Max, st.SpinBreaks)
		task.Stop()
		require.NoError(t, task.Wait())
	}
}
