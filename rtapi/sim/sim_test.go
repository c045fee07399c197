package sim_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/sim"
)

const ms = int64(time.Millisecond)

func openSim(t testing.TB, o *rtapi.SimOptions) (*rtapi.RT, *sim.Controller) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: o})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	c, err := sim.New(rt)
	require.NoError(t, err)
	return rt, c
}

func startPeriodic(t testing.TB, rt *rtapi.RT, spec rtapi.TaskSpec, fn func(*rtapi.Cycle)) *rtapi.Task {
	t.Helper()
	task, err := rt.NewPeriodicTask(spec, fn)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	return task
}

func events(t testing.TB, c *sim.Controller) []string {
	t.Helper()
	tr, err := c.Trace()
	require.NoError(t, err)
	out := make([]string, len(tr.Events))
	for i, e := range tr.Events {
		out[i] = e.String()
	}
	return out
}

// At one instant the due tasks run highest priority first, ties in
// creation order; the first cycle is part of that schedule, not run by
// Start.
func TestSimOrderAtOneInstant(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var order []string
	add := func(name string, prio int) {
		startPeriodic(t, rt, rtapi.TaskSpec{Name: name, Priority: prio, Period: time.Millisecond},
			func(cy *rtapi.Cycle) { order = append(order, fmt.Sprintf("%s%d", name, cy.Number())) })
	}
	add("low", 10)
	add("tieA", 50)
	add("high", 90)
	// tieB is created before tieC but started after it: creation wins.
	tieB, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "tieB", Priority: 50, Period: time.Millisecond},
		func(cy *rtapi.Cycle) { order = append(order, fmt.Sprintf("tieB%d", cy.Number())) })
	require.NoError(t, err)
	add("tieC", 50)
	require.NoError(t, tieB.Start())
	require.Empty(t, order, "no body runs before the controller does")
	require.NoError(t, c.Advance(time.Millisecond))
	require.Equal(t, []string{"high0", "tieA0", "tieB0", "tieC0", "low0", "high1", "tieA1", "tieB1", "tieC1", "low1"}, order)
	require.Equal(t, ms, c.Now())
	require.Equal(t, ms, rt.Now())
}

// Task bodies see virtual time through tc.Now and rt.Now.
func TestSimBodiesSeeVirtualTime(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var seen [][2]int64
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "clock", Period: 500 * time.Microsecond}, func(tc *rtapi.TaskContext) error {
		for {
			seen = append(seen, [2]int64{tc.Now(), rt.Now()})
			if !tc.WaitPeriod() {
				return nil
			}
		}
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(2*time.Millisecond))
	require.Len(t, seen, 5)
	for i, s := range seen {
		want := int64(i) * 500 * int64(time.Microsecond)
		require.Equal(t, [2]int64{want, want}, s, "cycle %d", i)
	}
	require.Equal(t, "sim", rt.Flavor().Name)
	require.False(t, rt.Flavor().RealTime)
}

// The package-level rtapi.Now is the monotonic clock whatever simulations
// are open: two tests running side by side, each with its own simulation,
// must not read each other's virtual time through it. (It used to read
// the virtual clock of the latest simulation opened.)
func TestNowIgnoresOpenSimulations(t *testing.T) {
	t.Parallel()
	before := rtapi.MonotonicNow()
	rtA, a := openSim(t, nil)
	require.NoError(t, a.Advance(5*time.Millisecond))
	rtB, _ := openSim(t, nil)
	require.GreaterOrEqual(t, rtapi.MonotonicNow(), before, "monotonic, not simulation B's virtual 0")
	require.EqualValues(t, 5*ms, rtA.Now())
	require.Zero(t, rtB.Now())
	require.NoError(t, rtB.Close())
	require.GreaterOrEqual(t, rtapi.MonotonicNow(), before, "monotonic, not simulation A's virtual 5 ms")
}

// Stats show exactly what was injected: constant jitter as latency, the
// declared cost as execution time, a too-slow body as overruns.
func TestSimStatsReflectInjection(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	jit := startTask(t, rt, c, "jit", time.Millisecond, sim.TaskConfig{
		Jitter: sim.ConstantJitter(20 * time.Microsecond), Cost: 300 * time.Microsecond})
	slow := startTask(t, rt, c, "slow", time.Millisecond, sim.TaskConfig{Cost: 1500 * time.Microsecond})
	require.NoError(t, c.Advance(100*time.Millisecond))

	st := jit.Stats()
	require.EqualValues(t, 20*time.Microsecond, st.Latency.Min)
	require.EqualValues(t, 20*time.Microsecond, st.Latency.Max)
	require.EqualValues(t, 99, st.Latency.Count)
	require.EqualValues(t, 300*time.Microsecond, st.Exec.Min)
	require.EqualValues(t, 300*time.Microsecond, st.Exec.Max)
	require.Zero(t, st.Overruns)

	st = slow.Stats()
	require.EqualValues(t, 1500*time.Microsecond, st.Exec.Min)
	require.EqualValues(t, 1500*time.Microsecond, st.Exec.Max)
	require.Equal(t, st.Cycles, st.Overruns, "every release passes while the body runs (CatchUp)")
	require.EqualValues(t, 66, st.Cycles, "cycle 66 starts at 99 ms")
}

// Stats.Since gives the statistics of a window: here the 50 cycles after
// the jitter changed, without the warm-up's.
func TestStatsSinceAMark(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	servo := startTask(t, rt, c, "servo", time.Millisecond, sim.TaskConfig{
		Jitter: sim.ConstantJitter(5 * time.Microsecond), Cost: 100 * time.Microsecond})
	other := startTask(t, rt, c, "other", time.Millisecond, sim.TaskConfig{})
	require.NoError(t, c.RunCycles(servo, 20))
	require.NoError(t, c.SetTask(servo, sim.TaskConfig{
		Jitter: sim.ConstantJitter(40 * time.Microsecond), Cost: 300 * time.Microsecond}))
	require.NoError(t, c.Advance(time.Millisecond)) // the last warm-up cycle's end enters Stats
	mark := servo.Stats()
	require.NoError(t, c.RunCycles(servo, 50))
	require.NoError(t, c.Advance(time.Millisecond))

	all := servo.Stats()
	window, err := all.Since(mark)
	require.NoError(t, err)
	require.Equal(t, all.Cycles-mark.Cycles, window.Cycles)
	require.EqualValues(t, window.Cycles, window.Latency.Count)
	require.Equal(t, 40*time.Microsecond, window.Latency.Min, "only the new jitter in the window")
	require.Equal(t, 40*time.Microsecond, window.Latency.Mean())
	require.Equal(t, 5*time.Microsecond, all.Latency.Min, "the whole run still has the old")
	require.Equal(t, 300*time.Microsecond, window.Exec.Mean())
	require.Zero(t, window.Overruns)

	_, err = all.Since(other.Stats())
	require.ErrorIs(t, err, rtapi.ErrInvalid, "a mark of another task")
	_, err = mark.Since(all)
	require.ErrorIs(t, err, rtapi.ErrInvalid, "a later mark")
}

func startTask(t testing.TB, rt *rtapi.RT, c *sim.Controller, name string, period time.Duration,
	cfg sim.TaskConfig) *rtapi.Task {
	t.Helper()
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: name, Period: period}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.SetTask(task, cfg))
	require.NoError(t, task.Start())
	return task
}

// RealExec charges what the body really took: a body that busy-waits
// 300 µs of real time takes at least that long in virtual time, and the
// release it runs over counts as an overrun.
func TestSimRealExec(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "real", Period: 100 * time.Microsecond}, func(*rtapi.Cycle) {
		for start := time.Now(); time.Since(start) < 300*time.Microsecond; {
		}
	})
	require.NoError(t, err)
	require.NoError(t, c.SetTask(task, sim.TaskConfig{RealExec: true}))
	require.NoError(t, task.Start())
	// Cycles, not a virtual duration: how long the busy-wait really
	// takes on a loaded machine is anyone's guess.
	require.NoError(t, c.RunCycles(task, 4))
	st := task.Stats()
	require.GreaterOrEqual(t, st.Exec.Count, int64(3), "the 4th cycle's is recorded as its WaitPeriod completes")
	require.GreaterOrEqual(t, st.Exec.Min, int64(300*time.Microsecond))
	require.Positive(t, st.Overruns)
}

func TestSimForcedOverrunStallAndClockStep(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	over, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "over", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.InjectOverrun(over, 5, 0))
	require.NoError(t, over.Start())
	stall, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "stall", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.InjectStall(stall, 5, 3))
	require.NoError(t, stall.Start())
	require.NoError(t, c.Advance(20*time.Millisecond))

	st := over.Stats()
	require.EqualValues(t, 1, st.Overruns, "one forced overrun misses exactly one release")
	require.EqualValues(t, time.Millisecond, st.Exec.Max)
	require.Zero(t, st.Latency.Max)

	st = stall.Stats()
	require.EqualValues(t, 3, st.Overruns, "a stall of 3 periods passes 3 releases")
	require.EqualValues(t, 3*time.Millisecond, st.Latency.Max)
	require.Contains(t, events(t, c), "5ms stall #5 stall 3ms")
	require.Contains(t, events(t, c), "8ms stall #5 wake 3ms")

	// A clock step: asleep across the jump, the tasks wake at its end.
	require.NoError(t, c.InjectClockStep(25*ms+ms/2, 2*time.Millisecond))
	require.NoError(t, c.Advance(10*time.Millisecond))
	require.Equal(t, 30*ms, c.Now())
	ev := events(t, c)
	require.Contains(t, ev, "25.5ms - #0 clock-step 2ms")
	require.Contains(t, ev, "27.5ms over #26 wake 1.5ms")
	require.EqualValues(t, 2, over.Stats().Overruns, "release 27ms passed during the step")
	require.EqualValues(t, 1500*time.Microsecond, over.Stats().Latency.Max)
}

// On one shared CPU, a higher-priority task's cost becomes a lower one's
// latency (it waits) and execution time (it is preempted).
func TestSimSharedCPU(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, &rtapi.SimOptions{SharedCPU: true})
	mk := func(name string, prio int, period, cost time.Duration) *rtapi.Task {
		task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: name, Priority: prio, Period: period}, func(*rtapi.Cycle) {})
		require.NoError(t, err)
		require.NoError(t, c.SetTask(task, sim.TaskConfig{Cost: cost}))
		require.NoError(t, task.Start())
		return task
	}
	high := mk("high", 90, time.Millisecond, 300*time.Microsecond)
	low := mk("low", 10, 2*time.Millisecond, 900*time.Microsecond)
	require.NoError(t, c.Advance(10*time.Millisecond))
	ev := events(t, c)
	// high runs 0-0.3 ms; low waits for it, runs from 0.3 ms, is
	// preempted by high's 1 ms release (1-1.3 ms) and ends at 1.5 ms.
	require.Contains(t, ev, "300µs high #0 end 300µs")
	require.Contains(t, ev, "300µs low #0 start")
	require.Contains(t, ev, "1.5ms low #0 end 1.2ms")
	require.Contains(t, ev, "2.3ms low #1 wake 300µs")
	require.Contains(t, ev, "3.5ms low #1 end 1.2ms")
	st := low.Stats()
	require.EqualValues(t, 300*time.Microsecond, st.Latency.Max, "waited for high")
	require.EqualValues(t, 1200*time.Microsecond, st.Exec.Min, "900 µs of its own + 300 µs preempted")
	require.EqualValues(t, 1500*time.Microsecond, st.Exec.Max, "the first cycle counts from Start, when high held the CPU")
	require.Zero(t, high.Stats().Latency.Max, "the highest priority never waits")
	require.Zero(t, high.Stats().Overruns+low.Stats().Overruns)

	// An overloaded CPU starves the low task: RunCycles gives up.
	hog, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "hog", Priority: 95, Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.SetTask(hog, sim.TaskConfig{Cost: 2 * time.Millisecond}))
	require.NoError(t, hog.Start())
	require.NoError(t, c.Advance(5*time.Millisecond))
	before := c.Now()
	require.ErrorIs(t, c.RunCycles(low, 2), rtapi.ErrTimeout)
	require.Equal(t, before+int64(time.Second), c.Now())

	// The default: as if each task had its own CPU.
	rt2, c2 := openSim(t, nil)
	t2, err := rt2.NewPeriodicTask(rtapi.TaskSpec{Name: "low", Priority: 10, Period: 2 * time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c2.SetTask(t2, sim.TaskConfig{Cost: 900 * time.Microsecond}))
	require.NoError(t, t2.Start())
	require.NoError(t, c2.Advance(10*time.Millisecond))
	require.EqualValues(t, 900*time.Microsecond, t2.Stats().Exec.Max)
}

// The periodic-timer wake modes are emulated: missed expirations come
// back as a count, as from a timerfd.
func TestSimTimerModeCountsExpirations(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "tfd", Period: time.Millisecond, Wake: rtapi.WakeTimerfd},
		func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.InjectOverrun(task, 3, 2500*time.Microsecond))
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(10*time.Millisecond))
	st := task.Stats()
	require.Equal(t, "timerfd", st.Wake)
	// The body of cycle 3 ran from 3 to 5.5 ms: the releases at 4 and 5 ms
	// passed while it ran, two overruns, as in nanosleep mode.
	require.EqualValues(t, 2, st.Overruns, "the releases at 4 and 5 ms, read as one count of 2")
	require.Contains(t, events(t, c), "5.5ms tfd #4 wake 500µs")
}

func TestSimPauseResumeStop(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var cycles []int64
	task := startPeriodic(t, rt, rtapi.TaskSpec{Name: "p", Period: time.Millisecond},
		func(cy *rtapi.Cycle) { cycles = append(cycles, cy.Release()/ms) })
	require.NoError(t, c.Advance(5*time.Millisecond))
	require.NoError(t, task.Pause())
	require.NoError(t, c.Advance(5*time.Millisecond)) // no more cycle: suspended at its wake-up
	require.NoError(t, task.Resume())
	require.NoError(t, c.Advance(2*time.Millisecond))
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 11, 12}, cycles)
	ev := events(t, c)
	require.Contains(t, ev, "6ms p #6 pause")
	require.Contains(t, ev, "10ms p #6 resume")
	require.Zero(t, task.Stats().Overruns, "periods spent paused are not overruns")

	// Stop reaches a task the simulation holds asleep, without advancing.
	task.Stop()
	require.NoError(t, task.Wait())
	require.Equal(t, 12*ms, c.Now())
	require.Contains(t, events(t, c), "12ms p #8 exit")
	require.ErrorIs(t, c.RunCycles(task, 1), rtapi.ErrState)
}

// A task stopped before its first cycle still runs that cycle (as Start
// promises) and then ends, all without a controller call.
func TestSimStopBeforeFirstCycle(t *testing.T) {
	t.Parallel()
	rt, _ := openSim(t, nil)
	var n int
	task := startPeriodic(t, rt, rtapi.TaskSpec{Name: "early", Period: time.Millisecond}, func(*rtapi.Cycle) { n++ })
	task.Stop()
	require.NoError(t, task.Wait())
	require.Equal(t, 1, n)
	other := startPeriodic(t, rt, rtapi.TaskSpec{Name: "deleted", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, other.Delete())
}

// A body stopping another task: the stop takes effect in virtual time.
func TestSimStopFromBody(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	victim := startPeriodic(t, rt, rtapi.TaskSpec{Name: "victim", Priority: 10, Period: time.Millisecond},
		func(*rtapi.Cycle) {})
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "killer", Priority: 20, Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 3 {
			victim.Stop()
		}
	})
	require.NoError(t, c.Advance(5*time.Millisecond))
	require.NoError(t, victim.Wait())
	require.EqualValues(t, 2, victim.Stats().Cycles)
	require.Contains(t, events(t, c), "3ms victim #3 exit")
}

// Lifecycle calls made by a task body happen at that body's instant.
func TestSimLifecycleFromBody(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var ran []string
	worker := startPeriodic(t, rt, rtapi.TaskSpec{Name: "worker", Priority: 10, Period: time.Millisecond},
		func(cy *rtapi.Cycle) { ran = append(ran, fmt.Sprint("w", cy.Release()/ms)) })
	late, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "late", Priority: 5, Period: 2 * time.Millisecond},
		func(cy *rtapi.Cycle) { ran = append(ran, fmt.Sprint("l", cy.Release()/ms)) })
	require.NoError(t, err)
	var errs []error
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "boss", Priority: 20, Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		switch cy.Number() {
		case 2:
			errs = append(errs, worker.Pause())
		case 5:
			errs = append(errs, worker.Resume())
		case 7:
			errs = append(errs, late.Start())
		}
	})
	require.NoError(t, c.Advance(10*time.Millisecond))
	for _, err := range errs {
		require.NoError(t, err)
	}
	// Paused at 2 ms by the boss, which runs first, the worker suspends
	// without running its 2 ms cycle; resumed at 5 ms, it is back on its
	// grid at 6 ms.
	require.Equal(t, []string{"w0", "w1", "w6", "w7", "l7", "w8", "w9", "l9", "w10"}, ran)
	ev := events(t, c)
	require.Contains(t, ev, "2ms worker #2 pause")
	require.Contains(t, ev, "5ms worker #2 resume")
}

// A panicking body ends its task only; one that returns ends cleanly; the
// others keep their schedule.
func TestSimPanicAndReturn(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	boom := startPeriodic(t, rt, rtapi.TaskSpec{Name: "boom", Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 3 {
			panic("overheated")
		}
	})
	quit := startPeriodic(t, rt, rtapi.TaskSpec{Name: "quit", Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 2 {
			cy.Stop(errors.New("done early"))
		}
	})
	once, err := rt.NewTask(rtapi.TaskSpec{Name: "once", Period: time.Millisecond}, func(*rtapi.TaskContext) error {
		return nil // never waits at all
	})
	require.NoError(t, err)
	require.NoError(t, once.Start())
	steady := startPeriodic(t, rt, rtapi.TaskSpec{Name: "steady", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, c.Advance(10*time.Millisecond))

	var pe *rtapi.PanicError
	require.ErrorAs(t, boom.Wait(), &pe)
	require.Equal(t, "overheated", pe.Value)
	require.EqualError(t, quit.Wait(), "done early")
	require.NoError(t, once.Wait())
	require.EqualValues(t, 10, steady.Stats().Cycles)
	ev := events(t, c)
	require.Contains(t, ev, "3ms boom #3 exit")
	require.Contains(t, ev, "2ms quit #2 exit")
	require.Contains(t, ev, "0s once #0 exit")
}

func TestSimRunUntilAndRunCycles(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var x atomic.Int64
	a := startPeriodic(t, rt, rtapi.TaskSpec{Name: "a", Period: time.Millisecond}, func(*rtapi.Cycle) { x.Add(1) })
	b := startPeriodic(t, rt, rtapi.TaskSpec{Name: "b", Period: 3 * time.Millisecond}, func(*rtapi.Cycle) {})

	require.NoError(t, c.RunUntil(func() bool { return x.Load() >= 10 }, time.Second))
	require.Equal(t, 9*ms, c.Now(), "the 10th cycle of a is released at 9 ms")
	require.EqualValues(t, 10, x.Load())

	// b has completed its cycles at 0, 3 and 6 ms (same priority as a,
	// started after it: its 9 ms cycle comes after a's).
	require.NoError(t, c.RunCycles(b, 2))
	require.Equal(t, 12*ms, c.Now())
	require.EqualValues(t, 4, b.Stats().Cycles)
	require.EqualValues(t, 12, a.Stats().Cycles)

	err := c.RunUntil(func() bool { return false }, 5*time.Millisecond)
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	require.Equal(t, 17*ms, c.Now())
	require.NoError(t, c.RunUntil(func() bool { return true }, 0), "checked before running")

	require.NoError(t, b.Pause())
	require.ErrorIs(t, c.RunCycles(b, 5), rtapi.ErrState, "paused during the run")
	require.ErrorIs(t, c.RunCycles(b, 1), rtapi.ErrState, "paused")
}

// A body that never comes back to WaitPeriod is reported by name after
// the hang timeout of real time, not a hang of the test.
func TestSimHungBodyIsReported(t *testing.T) {
	rt, c := openSim(t, &rtapi.SimOptions{HangTimeout: 100 * time.Millisecond})
	release := make(chan struct{})
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "ok", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	task := startPeriodic(t, rt, rtapi.TaskSpec{Name: "stuck", Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 2 {
			<-release
		}
	})
	err := c.Advance(10 * time.Millisecond)
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	var te *rtapi.TaskError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "stuck", te.Task)
	require.Contains(t, err.Error(), "WaitPeriod")
	require.ErrorIs(t, c.Advance(time.Millisecond), rtapi.ErrTimeout, "the simulation stays unusable")
	close(release)
	task.Stop()
	require.NoError(t, task.Wait())
}

// A body that hangs on its way out after a Stop made between controller
// calls is reported by the next controller call, like any hung body. (The
// stop used to run unwatched, and every later controller call blocked
// forever behind it.)
func TestSimHangAfterStopIsReported(t *testing.T) {
	rt, c := openSim(t, &rtapi.SimOptions{HangTimeout: 100 * time.Millisecond})
	release := make(chan struct{})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "stuck", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		<-release
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(2*time.Millisecond))
	task.Stop()
	done := make(chan error, 1)
	go func() { done <- c.Advance(time.Millisecond) }()
	select {
	case err := <-done:
		close(release)
		require.ErrorIs(t, err, rtapi.ErrTimeout)
		var te *rtapi.TaskError
		require.ErrorAs(t, err, &te)
		require.Equal(t, "stuck", te.Task)
	case <-time.After(30 * time.Second): // liveness only: the hang timeout is 100 ms
		close(release)
		t.Fatal("the controller call after the Stop never returned")
	}
	require.NoError(t, task.Wait())
}

func TestSimMisuse(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	require.ErrorIs(t, c.Advance(-time.Nanosecond), rtapi.ErrInvalid)
	require.NoError(t, c.Advance(time.Millisecond))
	require.ErrorIs(t, c.AdvanceTo(0), rtapi.ErrInvalid, "backwards")
	require.Panics(t, func() { _ = c.RunUntil(nil, time.Second) })
	require.ErrorIs(t, c.RunUntil(func() bool { return false }, -1), rtapi.ErrInvalid)
	require.ErrorIs(t, c.RunCycles(nil, 1), rtapi.ErrInvalid)
	require.ErrorIs(t, c.SetTask(nil, sim.TaskConfig{}), rtapi.ErrInvalid)

	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "t", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.ErrorIs(t, c.RunCycles(task, 1), rtapi.ErrState, "not started")
	require.ErrorIs(t, c.RunCycles(task, -1), rtapi.ErrInvalid)
	require.ErrorIs(t, c.SetTask(task, sim.TaskConfig{Cost: -1}), rtapi.ErrInvalid)
	for _, j := range []sim.Jitter{sim.ConstantJitter(-1), sim.UniformJitter(2, 1), sim.NormalJitter(0, -1),
		sim.ExponentialJitter(-1), sim.HistogramJitter(hist.Snapshot{}),
		sim.HistogramJitter(hist.Snapshot{Width: time.Microsecond})} {
		require.ErrorIs(t, c.SetTask(task, sim.TaskConfig{Jitter: j}), rtapi.ErrInvalid, "%v", j)
	}
	require.ErrorIs(t, c.InjectStall(task, 0, 1), rtapi.ErrInvalid)
	require.ErrorIs(t, c.InjectStall(task, 1, 0), rtapi.ErrInvalid)
	require.ErrorIs(t, c.InjectOverrun(task, -1, 0), rtapi.ErrInvalid)
	require.ErrorIs(t, c.InjectClockStep(c.Now(), 0), rtapi.ErrInvalid)
	require.ErrorIs(t, c.InjectClockStep(c.Now()-1, time.Millisecond), rtapi.ErrInvalid)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(5*time.Millisecond))
	require.ErrorIs(t, c.InjectOverrun(task, 2, 0), rtapi.ErrInvalid, "cycle already ran")
	require.ErrorIs(t, c.InjectStall(task, 3, 1), rtapi.ErrInvalid, "cycle already ran")

	other, _ := openSim(t, nil)
	foreign, err := other.NewPeriodicTask(rtapi.TaskSpec{Name: "f", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.ErrorIs(t, c.RunCycles(foreign, 1), rtapi.ErrInvalid)

	posix, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	defer posix.Close()
	_, err = sim.New(posix)
	require.ErrorIs(t, err, rtapi.ErrNotSupported)

	_, err = rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{HangTimeout: -1}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)

	closed, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(t, err)
	cc, err := sim.New(closed)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, cc.Advance(time.Millisecond), rtapi.ErrClosed)
	_, err = cc.Trace()
	require.ErrorIs(t, err, rtapi.ErrClosed)
	_, err = sim.New(closed)
	require.ErrorIs(t, err, rtapi.ErrClosed)
}

// The controller called from a task body is refused, not a deadlock.
func TestSimControllerFromBodyIsRefused(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	var errs []error
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "meddler", Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 1 {
			errs = append(errs, c.Advance(time.Millisecond))
			_, err := c.Trace()
			errs = append(errs, err)
		}
	})
	require.NoError(t, c.Advance(2*time.Millisecond))
	require.Len(t, errs, 2)
	for _, err := range errs {
		require.ErrorIs(t, err, rtapi.ErrState)
	}
	err := c.RunUntil(func() bool { return c.Advance(0) != nil }, time.Second)
	require.NoError(t, err, "the predicate saw the refusal")
}

// While a controller call runs, only the goroutine with the turn (a task
// body, RunUntil's predicate) owns the schedule: a lifecycle call from
// another goroutine is refused with ErrState and changes nothing, rather
// than being queued for whenever the schedule next looks (issue 24).
func TestSimLifecycleFromAnotherGoroutineIsRefused(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	other := startPeriodic(t, rt, rtapi.TaskSpec{Name: "other", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	paused := startPeriodic(t, rt, rtapi.TaskSpec{Name: "paused", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	idle, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "idle", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, paused.Pause())
	var errs []error
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "asker", Period: time.Millisecond}, func(cy *rtapi.Cycle) {
		if cy.Number() == 2 {
			// The body, which has the turn, waits while another goroutine calls.
			done := make(chan []error)
			go func() { done <- []error{other.Pause(), paused.Resume(), other.Stop(), idle.Start()} }()
			errs = <-done
		}
	})
	require.NoError(t, c.Advance(3*time.Millisecond))
	require.Len(t, errs, 4)
	for _, err := range errs {
		require.ErrorIs(t, err, rtapi.ErrState)
	}
	require.Equal(t, []rtapi.TaskState{rtapi.TaskRunning, rtapi.TaskPaused, rtapi.TaskCreated}, []rtapi.TaskState{other.State(), paused.State(), idle.State()})
	// RunUntil's predicate runs with the turn: its calls are admitted.
	require.NoError(t, c.RunUntil(func() bool { return other.Pause() == nil }, time.Millisecond))
	require.Equal(t, rtapi.TaskPaused, other.State())
}

// A Stop made between controller calls returns once the task has run to
// its end, in virtual time, at the instant of the Stop: its exit is the
// last event of the trace, and no later call can overtake it (it used to
// run in a stop drive that Stop did not wait for).
func TestSimStopBetweenCallsEndsTheTask(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	ended := false
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "stopped", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		ended = true
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(2*time.Millisecond))
	require.NoError(t, task.Stop())
	require.True(t, ended, "the body returned inside Stop")
	evs := events(t, c)
	require.Regexp(t, `^2ms stopped #\d+ exit$`, evs[len(evs)-1])
	require.EqualValues(t, 2*time.Millisecond, c.Now())
	require.NoError(t, task.Wait())
}

func TestSimSelectedByEnvironment(t *testing.T) {
	t.Setenv("RTAPI_FLAVOR", "sim")
	rt, err := rtapi.Open(rtapi.Options{})
	require.NoError(t, err)
	defer rt.Close()
	require.Equal(t, "sim", rt.Flavor().Name)
	_, err = sim.New(rt)
	require.NoError(t, err)
}

// A replayed histogram stays within what was recorded, deterministically.
func TestSimHistogramJitterReplay(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, &rtapi.SimOptions{Seed: 7})
	rec := startTask(t, rt, c, "recorded", time.Millisecond, sim.TaskConfig{
		Jitter: sim.NormalJitter(50*time.Microsecond, 20*time.Microsecond)})
	require.NoError(t, c.Advance(time.Second))
	h := rec.Stats().Latency
	require.Greater(t, h.Max, h.Min)

	rep := startTask(t, rt, c, "replayed", time.Millisecond, sim.TaskConfig{Jitter: sim.HistogramJitter(h)})
	require.NoError(t, c.Advance(time.Second))
	r := rep.Stats().Latency
	require.GreaterOrEqual(t, r.Min, h.Min)
	require.LessOrEqual(t, r.Max, h.Max)
	require.InDelta(t, float64(h.Mean()), float64(r.Mean()), float64(5*time.Microsecond))
}

// A task that is not periodic gets at least 1 µs of virtual time a cycle,
// so it cannot stop the clock.
func TestSimAperiodicTask(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "free"}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(time.Millisecond))
	require.EqualValues(t, 1000, task.Stats().Cycles)
}

func TestSimTraceLimit(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, &rtapi.SimOptions{TraceLimit: 3})
	startPeriodic(t, rt, rtapi.TaskSpec{Name: "t", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, c.Advance(2*time.Millisecond))
	tr, err := c.Trace()
	require.NoError(t, err)
	require.EqualValues(t, 6, tr.Count)
	require.Equal(t, "1ms t #1 end 0s\n2ms t #2 wake 0s\n2ms t #2 end 0s\n", tr.String())
}

// The per-cycle path allocates nothing on sim either: a long run
// allocates what a short one does.
func TestSimCycleAllocatesNothing(t *testing.T) {
	rt, c := openSim(t, nil)
	startTask(t, rt, c, "a", time.Millisecond, sim.TaskConfig{Jitter: sim.NormalJitter(10*time.Microsecond, time.Microsecond)})
	startTask(t, rt, c, "b", 3*time.Millisecond, sim.TaskConfig{Cost: 100 * time.Microsecond})
	short := testing.AllocsPerRun(20, func() { require.NoError(t, c.Advance(time.Millisecond)) })
	long := testing.AllocsPerRun(20, func() { require.NoError(t, c.Advance(100*time.Millisecond)) })
	require.Equal(t, short, long)
}

// scenario runs two tasks of different rates and priorities with every
// kind of injection, pauses and stops, and returns what a user could
// compare between runs.
func scenario(t *testing.T, seed uint64) (uint64, string) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: seed, TraceLimit: -1}})
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	c, err := sim.New(rt)
	require.NoError(t, err)
	var log strings.Builder
	shared := int64(0)
	body := func(cy *rtapi.Cycle) {
		shared = shared*31 + cy.Now() + cy.Number()
		fmt.Fprintf(&log, "%d,", rt.Now())
	}
	base := startTask(t, rt, c, "base", 50*time.Microsecond, sim.TaskConfig{
		Jitter: sim.UniformJitter(0, 30*time.Microsecond), Cost: 5 * time.Microsecond})
	base.Stop() // replaced by a body that logs
	require.NoError(t, base.Wait())
	require.NoError(t, base.Delete())
	mk := func(name string, prio int, period time.Duration, cfg sim.TaskConfig) *rtapi.Task {
		task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: name, Priority: prio, Period: period}, body)
		require.NoError(t, err)
		require.NoError(t, c.SetTask(task, cfg))
		require.NoError(t, task.Start())
		return task
	}
	mk("base", 90, 50*time.Microsecond, sim.TaskConfig{Jitter: sim.UniformJitter(0, 30*time.Microsecond),
		Cost: 5 * time.Microsecond})
	servo := mk("servo", 80, time.Millisecond, sim.TaskConfig{
		Jitter: sim.NormalJitter(20*time.Microsecond, 10*time.Microsecond), Cost: 200 * time.Microsecond})
	slow := mk("slow", 10, 10*time.Millisecond, sim.TaskConfig{
		Jitter: sim.ExponentialJitter(100 * time.Microsecond), Cost: 3 * time.Millisecond})
	require.NoError(t, c.InjectOverrun(slow, 3, 0))
	require.NoError(t, c.InjectStall(servo, 5, 2))
	require.NoError(t, c.InjectClockStep(20*ms, 1500*time.Microsecond))
	require.NoError(t, c.Advance(30*time.Millisecond))
	require.NoError(t, slow.Pause())
	require.NoError(t, c.Advance(10*time.Millisecond))
	require.NoError(t, slow.Resume())
	require.NoError(t, c.RunCycles(servo, 7))
	servo.Stop()
	require.NoError(t, servo.Wait())
	require.NoError(t, c.Advance(20*time.Millisecond))
	tr, err := c.Trace()
	require.NoError(t, err)
	for _, task := range rt.Tasks() {
		st := task.Stats()
		fmt.Fprintf(&log, "\n%s cycles %d overruns %d lat %d/%d exec %d/%d", st.Name, st.Cycles, st.Overruns,
			st.Latency.Min, st.Latency.Max, st.Exec.Min, st.Exec.Max)
	}
	fmt.Fprintf(&log, "\nshared %d events %d", shared, tr.Count)
	return tr.Digest, log.String()
}

// Same program and seed, same trace: across runs and GOMAXPROCS.
func TestSimDeterministic(t *testing.T) {
	digest, log := scenario(t, 42)
	for _, procs := range []int{1, 64, runtime.GOMAXPROCS(0)} {
		old := runtime.GOMAXPROCS(procs)
		d, l := scenario(t, 42)
		runtime.GOMAXPROCS(old)
		require.Equal(t, log, l, "GOMAXPROCS=%d", procs)
		require.Equal(t, digest, d, "GOMAXPROCS=%d", procs)
	}
	d, _ := scenario(t, 43)
	require.NotEqual(t, digest, d, "another seed draws other jitter")
}

func TestSimErrorsNameTheCall(t *testing.T) {
	t.Parallel()
	_, c := openSim(t, nil)
	err := c.AdvanceTo(-1)
	require.True(t, errors.Is(err, rtapi.ErrInvalid))
	require.Contains(t, err.Error(), "back")
}

func BenchmarkSimEmpty1kHz(b *testing.B) {
	rt, c := openSim(b, &rtapi.SimOptions{TraceLimit: -1})
	task := startPeriodic(b, rt, rtapi.TaskSpec{Name: "empty", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	b.ResetTimer()
	require.NoError(b, c.Advance(time.Duration(b.N)*time.Millisecond))
	b.StopTimer()
	b.ReportMetric(float64(task.Stats().Cycles)/b.Elapsed().Seconds(), "cycles/s")
}

// The same with the default trace (the last 4096 events kept).
func BenchmarkSimEmpty1kHzTraced(b *testing.B) {
	rt, c := openSim(b, nil)
	task := startPeriodic(b, rt, rtapi.TaskSpec{Name: "empty", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	b.ResetTimer()
	require.NoError(b, c.Advance(time.Duration(b.N)*time.Millisecond))
	b.StopTimer()
	b.ReportMetric(float64(task.Stats().Cycles)/b.Elapsed().Seconds(), "cycles/s")
}

// Two tasks at 1 and 2 ms: every release switches between goroutines.
func BenchmarkSimTwoTasks(b *testing.B) {
	rt, c := openSim(b, &rtapi.SimOptions{TraceLimit: -1})
	t1 := startPeriodic(b, rt, rtapi.TaskSpec{Name: "a", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	t2 := startPeriodic(b, rt, rtapi.TaskSpec{Name: "b", Period: 2 * time.Millisecond}, func(*rtapi.Cycle) {})
	b.ResetTimer()
	require.NoError(b, c.Advance(time.Duration(b.N)*time.Millisecond))
	b.StopTimer()
	b.ReportMetric(float64(t1.Stats().Cycles+t2.Stats().Cycles)/b.Elapsed().Seconds(), "cycles/s")
}

// randomScenario drives a simulation with a seeded random mix of tasks,
// injections and lifecycle calls (from the test and from task bodies),
// and returns the trace digest and a log of every call's outcome.
func randomScenario(t *testing.T, seed uint64) (uint64, string) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim",
		Sim: &rtapi.SimOptions{Seed: seed, TraceLimit: -1, SharedCPU: seed%2 == 0}})
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	c, err := sim.New(rt)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 1))
	var log strings.Builder
	note := func(what string, err error) {
		fmt.Fprintf(&log, "%d %s: %s\n", c.Now(), what, errClass(err))
	}
	var tasks []*rtapi.Task
	newTask := func() {
		i := len(tasks)
		period := time.Duration(50+rng.IntN(5000)) * time.Microsecond
		name := fmt.Sprintf("t%d", i)
		var task *rtapi.Task
		spec := rtapi.TaskSpec{Name: name, Priority: 1 + rng.IntN(98), Period: period,
			Wake:    []rtapi.WakeMode{rtapi.WakeAuto, rtapi.WakeTimerfd, rtapi.WakePosixTimer}[rng.IntN(3)],
			Overrun: rtapi.OverrunPolicy(rng.IntN(2))}
		task, err := rt.NewPeriodicTask(spec,
			func(cy *rtapi.Cycle) {
				// Bodies meddle with their neighbours, deterministically.
				if n := cy.Number(); n%11 == 4 && i > 0 {
					_ = tasks[i-1].Pause()
				} else if n%11 == 9 && i > 0 {
					_ = tasks[i-1].Resume()
				}
				fmt.Fprintf(&log, "%s@%d,", task.Name(), rt.Now())
			})
		require.NoError(t, err)
		cfg := sim.TaskConfig{Cost: time.Duration(rng.IntN(int(period * 3 / 2)))}
		switch rng.IntN(4) {
		case 0:
			cfg.Jitter = sim.UniformJitter(0, period/3)
		case 1:
			cfg.Jitter = sim.NormalJitter(period/10, period/20)
		case 2:
			cfg.Jitter = sim.ExponentialJitter(period / 8)
		}
		note("set "+name, c.SetTask(task, cfg))
		note("overrun "+name, c.InjectOverrun(task, int64(1+rng.IntN(20)), 0))
		note("stall "+name, c.InjectStall(task, int64(1+rng.IntN(20)), int64(1+rng.IntN(3))))
		tasks = append(tasks, task)
		note("start "+name, task.Start())
	}
	for range 3 {
		newTask()
	}
	for step := range 40 {
		pick := tasks[rng.IntN(len(tasks))]
		switch op := rng.IntN(9); op {
		case 0, 1, 2:
			note("advance", c.Advance(time.Duration(rng.IntN(5000))*time.Microsecond))
		case 3:
			note("pause "+pick.Name(), pick.Pause())
		case 4:
			note("resume "+pick.Name(), pick.Resume())
		case 5:
			note("run cycles "+pick.Name(), c.RunCycles(pick, int64(1+rng.IntN(5))))
		case 6:
			if step%3 == 0 {
				pick.Stop()
				note("stop "+pick.Name(), pick.Wait())
			}
		case 7:
			if len(tasks) < 6 {
				newTask()
			}
		case 8:
			note("clock step", c.InjectClockStep(c.Now()+int64(rng.IntN(3000))*1000, time.Duration(1+rng.IntN(2000))*time.Microsecond))
		}
	}
	note("advance", c.Advance(10*time.Millisecond))
	tr, err := c.Trace()
	require.NoError(t, err)
	for _, task := range tasks {
		st := task.Stats()
		fmt.Fprintf(&log, "%s %s cycles %d overruns %d lat %d..%d exec %d..%d\n", st.Name, task.State(), st.Cycles,
			st.Overruns, st.Latency.Min, st.Latency.Max, st.Exec.Min, st.Exec.Max)
	}
	return tr.Digest, log.String()
}

// errClass names the sentinel err matches: what a call's outcome means,
// without its wording (which may change without the simulation changing).
func errClass(err error) string {
	for _, c := range []struct {
		name string
		err  error
	}{{"invalid", rtapi.ErrInvalid}, {"state", rtapi.ErrState}, {"timeout", rtapi.ErrTimeout}, {"closed", rtapi.ErrClosed}} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return "ok"
}

// Random programs — tasks pausing and resuming each other, stops, starts,
// injections — give the same trace twice, on one P or many.
func TestSimRandomScenariosAreDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		d1, l1 := randomScenario(t, seed)
		old := runtime.GOMAXPROCS(int(1 + seed%2*63))
		d2, l2 := randomScenario(t, seed)
		runtime.GOMAXPROCS(old)
		require.Equal(t, l1, l2, "seed %d", seed)
		require.Equal(t, d1, d2, "seed %d", seed)
	}
}

// A program that uses RegisterFlags and RT.Run, started with
// RTAPI_FLAVOR=sim left in the environment, ran zero cycles and exited
// 0: Run now refuses at once, with ErrNotSupported, when no controller
// drives the virtual clock, and closes the RT. With a controller, Run
// waits for its context as on any flavor.
func TestRunRefusesAClockNothingDrives(t *testing.T) {
	t.Setenv("RTAPI_FLAVOR", "sim")
	for _, drive := range []bool{false, true} {
		fs := flag.NewFlagSet("program", flag.ContinueOnError)
		opts := rtapi.RegisterFlags(fs)
		require.NoError(t, fs.Parse(nil))
		opts.Logger = zap.NewNop()
		rt, err := rtapi.Open(*opts)
		require.NoError(t, err)
		require.Equal(t, "sim", rt.Flavor().Name)
		task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(*rtapi.Cycle) {})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		ctx, cancel := context.WithCancel(context.Background())
		if drive {
			clock, err := sim.New(rt)
			require.NoError(t, err)
			require.NoError(t, clock.Advance(3*time.Millisecond))
			cancel() // the run is over; Run returns at once
		} else {
			defer cancel() // Run must not wait for it
		}
		err = rt.Run(ctx)
		if drive {
			require.NoError(t, err)
			require.EqualValues(t, 3, task.Stats().Cycles)
		} else {
			require.ErrorIs(t, err, rtapi.ErrNotSupported)
			require.ErrorContains(t, err, "RTAPI_FLAVOR")
			require.Zero(t, task.Stats().Cycles)
		}
		require.ErrorIs(t, rt.Close(), nil, "Run closed the RT")
		_, err = rt.NewTask(rtapi.TaskSpec{Name: "late"}, func(*rtapi.TaskContext) error { return nil })
		require.ErrorIs(t, err, rtapi.ErrClosed, "Run closed the RT")
	}
}

// A program that runs tasks on sim but never drives the virtual clock (a
// real program started with RTAPI_FLAVOR=sim) ran no cycle: Close says
// so instead of ending silently. One that drove it is not warned.
func TestCloseWarnsWhenTheClockNeverMoved(t *testing.T) {
	t.Parallel()
	for _, drive := range []bool{false, true} {
		core, logs := observer.New(zap.WarnLevel)
		rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Logger: zap.New(core)})
		require.NoError(t, err)
		task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(*rtapi.Cycle) {})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		if drive {
			clock, err := sim.New(rt)
			require.NoError(t, err)
			require.NoError(t, clock.Advance(3*time.Millisecond))
		}
		require.NoError(t, rt.Close())
		warned := logs.FilterMessageSnippet("virtual clock never advanced").Len()
		if drive {
			require.Zero(t, warned)
		} else {
			require.Equal(t, 1, warned, "%v", logs.All())
		}
	}
}

// A task that is not periodic resumes like a periodic one: Resume
// returns, and the body runs again only inside a controller call, on the
// virtual clock (issue 21, defect 8: Resume never returned, and the body
// ran a cycle outside any controller call).
func TestSimAperiodicPauseResume(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "free"}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(10*time.Microsecond))
	require.NoError(t, task.Pause())
	require.NoError(t, c.Advance(10*time.Microsecond))
	paused := task.Stats().Cycles
	resumed := make(chan error, 1)
	go func() { resumed <- task.Resume() }()
	select {
	case err := <-resumed:
		require.NoError(t, err)
	case <-time.After(rttest.WaitTimeout):
		t.Fatalf("Resume of a task that is not periodic still blocked after %v", rttest.WaitTimeout)
	}
	require.Equal(t, paused, task.Stats().Cycles, "a cycle ran outside any controller call")
	require.NoError(t, c.Advance(10*time.Microsecond))
	require.Greater(t, task.Stats().Cycles, paused)
	task.Stop()
	require.NoError(t, task.Wait())
}

// A task's thread counters mean nothing in virtual time: they stay 0 on
// sim, also once the task has ended, so two identical runs have identical
// Stats (issue 21, defect 9: the host thread's getrusage counters were
// read as the task ended, 500+ minor faults after Stop).
func TestSimStatsHaveNoHostCounters(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	task := startPeriodic(t, rt, rtapi.TaskSpec{Name: "p", Period: time.Millisecond}, func(*rtapi.Cycle) {})
	require.NoError(t, c.Advance(5*time.Millisecond))
	task.Stop()
	require.NoError(t, task.Wait())
	s := task.Stats()
	require.Zero(t, s.MinorFaults)
	require.Zero(t, s.MajorFaults)
	require.Zero(t, s.VoluntarySwitches)
	require.Zero(t, s.InvoluntarySwitches)
}

// On sim a task runs on a virtual clock by virtual priority: Stats says
// "virtual", as the tools print it, not the host thread's SCHED_OTHER.
func TestSimStatsPolicyIsVirtual(t *testing.T) {
	t.Parallel()
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
	require.Equal(t, rtapi.PolicyVirtual, st.Policy)
	require.Equal(t, 90, st.Priority)
	require.Contains(t, st.String(), "servo: virtual prio 90 ")
}
