package rtapi

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

func TestCeilingBoardCountsTheHighestPriority(t *testing.T) {
	var b ceilingBoard
	require.Zero(t, b.top.Load())
	require.True(t, b.add(40))
	require.True(t, b.add(60))
	require.True(t, b.add(60))
	require.EqualValues(t, 60, b.top.Load())
	b.remove(60)
	require.EqualValues(t, 60, b.top.Load(), "one task at 60 is left")
	b.remove(60)
	require.EqualValues(t, 40, b.top.Load())
	b.remove(40)
	require.Zero(t, b.top.Load())

	for _, prio := range []int{-1, 0, sys.FIFOPrioMax + 1, 1 << 30} {
		require.False(t, b.add(prio), "priority %d", prio)
	}
	require.Zero(t, b.top.Load())
	require.Panics(t, func() { b.remove(40) }, "remove without add")
}

// schedOf reads thread tid's policy and priority as "SCHED_FIFO 50".
func schedOf(tid int) string {
	p, prio, err := sys.Scheduler(tid)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v %d", p, prio)
}

// startPair opens an RT with opts and starts two tasks on it: "fast"
// (1 ms, priority 50) and "slow" (priority 40), whose body calls each
// after every period it waited for.
func startPair(t *testing.T, opts Options, slowPeriod time.Duration, each func()) (fast, slow *Task) {
	t.Helper()
	rt, err := Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	fast, err = rt.NewTask(TaskSpec{Name: "fast", Period: time.Millisecond, Priority: 50}, loopBody)
	require.NoError(t, err)
	slow, err = rt.NewTask(TaskSpec{Name: "slow", Period: slowPeriod, Priority: 40}, func(tc *TaskContext) error {
		for tc.WaitPeriod() {
			each()
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, fast.Start())
	require.NoError(t, slow.Start())
	return fast, slow
}

// A task below another sleeps at the other's priority and runs its body
// at its own; once the other has ended, it sleeps at its own again.
func TestSlowerTaskSleepsAtTheCeiling(t *testing.T) {
	rttest.RequireRT(t)
	var cycles atomic.Int64
	var wrong atomic.Pointer[string]                       // the first body cycle not at the task's own priority
	opts := Options{Flavor: "rt-preempt", LockMemory: Off} // RuntimeGuard Auto
	fast, slow := startPair(t, opts, 4*time.Millisecond, func() {
		if s := schedOf(0); s != "SCHED_FIFO 40" && wrong.Load() == nil {
			wrong.Store(&s)
		}
		cycles.Add(1)
	})

	rttest.WaitFor(t, "the slower task's thread at the faster one's priority", func() bool {
		return schedOf(slow.Tid()) == "SCHED_FIFO 50"
	})
	rttest.WaitFor(t, "three cycles of the slower task", func() bool { return cycles.Load() >= 3 })
	require.Equal(t, "SCHED_FIFO 50", schedOf(fast.Tid()), "the highest task never moves")

	require.NoError(t, fast.Stop())
	require.NoError(t, fast.Wait())
	// The sleep after the next cycle begins without a task above it.
	c0 := cycles.Load()
	rttest.WaitFor(t, "two more cycles of the slower task", func() bool { return cycles.Load() >= c0+2 })
	for range 20 {
		require.Equal(t, "SCHED_FIFO 40", schedOf(slow.Tid()), "alone, the task sleeps at its own priority")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, slow.Stop())
	require.NoError(t, slow.Wait())
	if s := wrong.Load(); s != nil {
		t.Fatalf("a body cycle of the slower task ran at %s, want SCHED_FIFO 40", *s)
	}
}

// Without the runtime guard there is no ceiling: a task sleeps at its own
// priority.
func TestNoCeilingWithTheGuardOff(t *testing.T) {
	rttest.RequireRT(t)
	var cycles atomic.Int64
	_, slow := startPair(t, Options{Flavor: "rt-preempt", LockMemory: Off, RuntimeGuard: Off}, 2*time.Millisecond,
		func() { cycles.Add(1) })
	for cycles.Load() < 5 {
		require.Equal(t, "SCHED_FIFO 40", schedOf(slow.Tid()))
		time.Sleep(200 * time.Microsecond)
	}
}

// A thread the watchdog faults while it sleeps at the ceiling ends
// SCHED_OTHER, as the guard left it, and is not raised again; raising
// and lowering allocate nothing.
func TestCeilingLeavesAFaultedThreadOther(t *testing.T) {
	rttest.RequireRT(t)
	require.True(t, wakeCeiling.add(30))
	t.Cleanup(func() { wakeCeiling.remove(30) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		task := &Task{}
		tc := &TaskContext{task: task, ceilPrio: 20}
		if !assertNoErr(t, sys.SetScheduler(0, sys.SchedFIFO, 20)) {
			return
		}
		top := fmt.Sprintf("SCHED_FIFO %d", wakeCeiling.top.Load())
		if !tc.raiseToCeiling() || schedOf(0) != top {
			t.Errorf("raised: %s, want %s", schedOf(0), top)
			return
		}
		tc.lowerFromCeiling()
		if got := schedOf(0); got != "SCHED_FIFO 20" {
			t.Errorf("lowered: %s, want SCHED_FIFO 20", got)
		}
		if a := testing.AllocsPerRun(100, func() {
			if tc.raiseToCeiling() {
				tc.lowerFromCeiling()
			}
		}); a != 0 {
			t.Errorf("raise and lower: %v allocations, want 0", a)
		}

		tc.raiseToCeiling()
		task.ctl.Or(ctlFault) // the watchdog faults the task as it sleeps
		tc.lowerFromCeiling()
		if got := schedOf(0); got != "SCHED_OTHER 0" {
			t.Errorf("lowered after a fault: %s, want SCHED_OTHER 0", got)
		}
		if tc.raiseToCeiling() {
			t.Errorf("a faulted task raised to the ceiling")
		}
		if got := schedOf(0); got != "SCHED_OTHER 0" {
			t.Errorf("after a refused raise: %s, want SCHED_OTHER 0", got)
		}
	}()
	<-done
}

// assertNoErr is require.NoError for a goroutine other than the test's.
func assertNoErr(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
