package rtapi_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/msg"
)

func TestMain(m *testing.M) {
	// The roles no test plays: TestTaskNeverOnMainThread's,
	// TestVanillaFIFOWithoutPermission's and TestRuntimeFIFONotInherited's
	// children.
	switch role := rttest.ChildRole(); role {
	case "mainthread", "unprivileged":
		os.Exit(child(role))
	case "policy":
		os.Exit(childPolicy())
	}
	os.Exit(rttest.Main(m)) // m.Run, then a line counting the skipped privileged tests
}

func open(t *testing.T, o rtapi.Options) *rtapi.RT {
	t.Helper()
	return rttest.Open(t, func() (*rtapi.RT, error) { return rtapi.Open(o) })
}

// loop is the simplest periodic body.
func loop(tc *rtapi.TaskContext) error {
	for tc.WaitPeriod() {
	}
	return nil
}

// waitCycles waits until the task has n cycles.
func waitCycles(t *testing.T, task *rtapi.Task, n int64) {
	t.Helper()
	rttest.WaitFor(t, fmt.Sprintf("task %s: %d cycles", task.Name(), n),
		func() bool { return task.Stats().Cycles >= n })
}

func TestOpenAutoSaysWhy(t *testing.T) {
	rt := open(t, rtapi.Options{})
	info := rt.Flavor()
	require.NotEmpty(t, info.Name)
	require.NotEmpty(t, info.Why)
	require.NotNil(t, rt.Kernel())
	if rt.Kernel().Kind != kerneldetect.PreemptRT {
		require.Equal(t, "posix", info.Name, "a non-RT kernel runs posix unless told otherwise")
		require.False(t, info.RealTime)
	}
}

func TestOpenAutoOnPreemptRTReport(t *testing.T) {
	rttest.RequireRT(t)
	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	k.Kind = kerneldetect.PreemptRT // as read on an RT kernel
	rt := open(t, rtapi.Options{Kernel: k, LockMemory: rtapi.Off})
	require.Equal(t, "rt-preempt", rt.Flavor().Name)
	require.True(t, rt.Flavor().RealTime)
	require.Contains(t, rt.Flavor().Why, "PREEMPT_RT")
}

func TestOpenMisuse(t *testing.T) {
	_, err := rtapi.Open(rtapi.Options{Flavor: "rtai-kernel"})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "posix")
	_, err = rtapi.Open(rtapi.Options{CPUs: []int{4096}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "not online")
	_, err = rtapi.Open(rtapi.Options{Instance: -1})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = rtapi.Open(rtapi.Options{HistogramBound: time.Nanosecond})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = rtapi.Open(rtapi.Options{StopTimeout: -time.Second})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

func TestEnvironmentAndFlags(t *testing.T) {
	t.Setenv("RTAPI_FLAVOR", "nonsense")
	_, err := rtapi.Open(rtapi.Options{})
	require.ErrorIs(t, err, rtapi.ErrInvalid, "env is read when nothing else is set")

	// A flag wins over the environment, a field set in code over a flag.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := rtapi.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-rtapi.flavor=posix", "-rtapi.cpu=0", "-rtapi.lock-memory=off", "-rtapi.instance=3"}))
	rt := open(t, *o)
	require.Equal(t, "posix", rt.Flavor().Name)
	require.Equal(t, 3, rt.Instance())
	require.NoError(t, fs.Parse([]string{"-rtapi.shm-group=65534"}))
	require.Equal(t, "65534", o.ShmGroup)
	o.Flavor = "also-nonsense"
	_, err = rtapi.Open(*o)
	require.ErrorIs(t, err, rtapi.ErrInvalid)

	require.Error(t, fs.Parse([]string{"-rtapi.cpu=x"}))
	require.Error(t, fs.Parse([]string{"-rtapi.cpu=3-1"}))
	require.Error(t, fs.Parse([]string{"-rtapi.lock-memory=maybe"}))

	t.Setenv("RTAPI_FLAVOR", "")
	for name, val := range map[string]string{
		"RTAPI_VANILLA_FIFO": "perhaps", "RTAPI_STRICT": "2x", "RTAPI_CPU": "one",
		"RTAPI_LOCK_MEMORY": "sometimes", "RTAPI_INSTANCE": "-4", "RTAPI_TIMER_SIGNAL": "99",
		"RTAPI_HISTOGRAM_BOUND": "1ns", "RTAPI_STOP_TIMEOUT": "-1s", "RTAPI_RUNTIME_GUARD": "sometimes",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, val)
			_, err := rtapi.Open(rtapi.Options{})
			require.ErrorIs(t, err, rtapi.ErrInvalid)
			require.Contains(t, err.Error(), name)
		})
	}
}

// A flag given explicitly false beats the environment's true: the
// documented precedence (code, flag, environment, detection) holds for
// yes/no settings too.
func TestFlagFalseBeatsEnvironment(t *testing.T) {
	t.Setenv("RTAPI_VANILLA_FIFO", "1")
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := rtapi.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-rtapi.flavor=posix", "-rtapi.vanilla-fifo=false"}))
	rt := open(t, *o)
	require.False(t, rt.Flavor().RealTime, "posix without VanillaFIFO: %s", rt.Flavor().Why)

	// And code beats both: VanillaFIFO Off set in code.
	o = rtapi.RegisterFlags(flag.NewFlagSet("test", flag.ContinueOnError))
	o.Flavor, o.VanillaFIFO = "posix", rtapi.Off
	require.False(t, open(t, *o).Flavor().RealTime)
}

func TestPriorities(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	require.Equal(t, 1, rt.PrioLowest())
	require.Equal(t, 98, rt.PrioHighest())
	require.Equal(t, 98, rt.PrioNextHigher(98))
	require.Equal(t, 51, rt.PrioNextHigher(50))
	require.Equal(t, 1, rt.PrioNextLower(1))
	require.Equal(t, 49, rt.PrioNextLower(50))
	require.Equal(t, 1, rt.PrioNextHigher(-7))
	require.Equal(t, 98, rt.PrioNextLower(500))
}

func TestNewTaskMisuse(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	bad := []struct {
		spec rtapi.TaskSpec
		says string
	}{
		{rtapi.TaskSpec{Period: time.Millisecond}, "needs a name"},
		{rtapi.TaskSpec{Name: "p", Priority: 99}, "priority 99 outside"},
		{rtapi.TaskSpec{Name: "p", Priority: -1}, "outside"},
		{rtapi.TaskSpec{Name: "p", Period: -time.Millisecond}, "negative period"},
		{rtapi.TaskSpec{Name: "p", Period: time.Microsecond}, "below the posix flavor's minimum"},
		{rtapi.TaskSpec{Name: "p", Period: time.Millisecond, Wake: 9}, "unknown wake mode"},
		{rtapi.TaskSpec{Name: "p", Wake: rtapi.WakeTimerfd}, "needs a period"},
		{rtapi.TaskSpec{Name: "p", Period: time.Millisecond, Overrun: 7}, "unknown overrun policy"},
		{rtapi.TaskSpec{Name: "p", StackPrefault: -1}, "negative stack"},
		{rtapi.TaskSpec{Name: "p", HistogramBound: time.Nanosecond}, "histogram"},
		{rtapi.TaskSpec{Name: "p", CPU: rtapi.OnCPU(4000)}, "not online"},
		{rtapi.TaskSpec{Name: "p", CPU: -5}, "CPU choice"},
	}
	for _, b := range bad {
		_, err := rt.NewTask(b.spec, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "%+v", b.spec)
		require.Contains(t, err.Error(), b.says)
		var te *rtapi.TaskError
		require.True(t, errors.As(err, &te))
		require.Equal(t, "new", te.Op)
	}
	_, err := rt.NewTask(rtapi.TaskSpec{Name: "dup"}, loop)
	require.NoError(t, err)
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "dup"}, loop)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "exists")
	require.PanicsWithValue(t, "rtapi: RT.NewTask called with a nil body", func() {
		_, _ = rt.NewTask(rtapi.TaskSpec{Name: "nil"}, nil)
	})
	require.Panics(t, func() { _, _ = rt.NewPeriodicTask(rtapi.TaskSpec{Name: "nil"}, nil) })
	_, err = rt.NewPeriodicTask(rtapi.TaskSpec{Name: "aperiodic"}, func(*rtapi.Cycle) {})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

func TestLifecycleMisuse(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "life", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.Equal(t, rtapi.TaskCreated, task.State())
	require.ErrorIs(t, task.Wait(), rtapi.ErrState, "Wait on a task never started")
	require.ErrorIs(t, task.Pause(), rtapi.ErrState)
	require.ErrorIs(t, task.Resume(), rtapi.ErrState)
	require.NoError(t, task.Start())
	require.ErrorIs(t, task.Start(), rtapi.ErrState, "Start twice")
	require.ErrorIs(t, task.Resume(), rtapi.ErrState, "Resume without Pause")
	require.NoError(t, task.Pause())
	require.ErrorIs(t, task.Pause(), rtapi.ErrState, "Pause twice")
	require.NoError(t, task.Resume())

	require.NoError(t, rt.Close())
	require.NoError(t, rt.Close(), "Close is idempotent")
	require.Equal(t, rtapi.TaskDone, task.State())
	require.NoError(t, task.Wait())
	task.Stop() // no-op
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "late"}, loop)
	require.ErrorIs(t, err, rtapi.ErrClosed)

	// A task stopped before it ever started is done and never runs.
	rt2 := open(t, rtapi.Options{Flavor: "posix"})
	ran := false
	never, err := rt2.NewTask(rtapi.TaskSpec{Name: "never"}, func(*rtapi.TaskContext) error { ran = true; return nil })
	require.NoError(t, err)
	never.Stop()
	require.NoError(t, never.Wait())
	require.ErrorIs(t, never.Start(), rtapi.ErrState)
	require.False(t, ran)
}

func TestStartAfterCloseIsClosed(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "x"}, loop)
	require.NoError(t, err)
	require.NoError(t, rt.Close())
	require.ErrorIs(t, task.Start(), rtapi.ErrClosed)
}

// Every flavor this machine can run, every wake mode: cycles happen,
// latency and exec time are recorded, and the thread runs the policy the
// flavor promised.
func TestPeriodicTasksOnEveryFlavor(t *testing.T) {
	type setup struct {
		opts rtapi.Options
		fifo bool
	}
	setups := map[string]setup{"posix": {opts: rtapi.Options{Flavor: "posix"}}}
	if sys.ProbeSchedFIFO() == nil {
		setups["posix+vanilla-fifo"] = setup{opts: rtapi.Options{Flavor: "posix", VanillaFIFO: rtapi.On}, fifo: true}
		setups["rt-preempt"] = setup{opts: rtapi.Options{Flavor: "rt-preempt"}, fifo: true}
	} else {
		rttest.RequireRT(t) // reports loudly which setups were not run
	}
	for name, s := range setups {
		t.Run(name, func(t *testing.T) {
			rt := open(t, s.opts)
			for _, wake := range []rtapi.WakeMode{rtapi.WakeAuto, rtapi.WakeNanosleep, rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
				// No watchdog: this VM's CPUs stop for 50-100 ms now and
				// then (docs/GC.md), which the default's 52.5 ms takes for
				// a runaway; CI's run faulted two tasks that way at their
				// third and sixth cycles, and they never reached 50.
				task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: 500 * time.Microsecond, Wake: wake, Watchdog: -1}, loop)
				require.NoError(t, err)
				require.NoError(t, task.Start())
			}
			for _, task := range rt.Tasks() {
				waitCycles(t, task, 50)
				st := task.Stats()
				// Each release was either woken (a latency sample) or run
				// late as an overrun.
				require.Positive(t, st.Latency.Count)
				require.GreaterOrEqual(t, st.Latency.Count+st.Overruns, st.Cycles-1)
				require.GreaterOrEqual(t, st.Latency.Min, int64(0), "a release is never woken early")
				require.Positive(t, st.Exec.Count)
				policy, prio, err := sys.Scheduler(task.Tid())
				require.NoError(t, err)
				if s.fifo {
					require.Equal(t, sys.SchedFIFO, policy, "task %s", task.Name())
					require.Equal(t, rt.PrioHighest(), prio)
					require.Equal(t, "SCHED_FIFO", st.Policy)
				} else {
					require.Equal(t, sys.SchedOther, policy)
				}
				if task.Name() != "auto" {
					require.Equal(t, task.Name(), st.Wake)
				}
			}
		})
	}
}

// The VanillaFIFO runtime flag really switches the wake-up to a POSIX
// timer: the task thread has the timer signal blocked and pending
// deliveries are what wake it.
func TestVanillaFIFOUsesPosixTimer(t *testing.T) {
	rttest.RequireRT(t)
	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	k.Kind = kerneldetect.Vanilla
	rt := open(t, rtapi.Options{Kernel: k, VanillaFIFO: rtapi.On})
	require.Equal(t, "posix", rt.Flavor().Name)
	require.True(t, rt.Flavor().RealTime)
	require.Contains(t, rt.Flavor().Why, "POSIX timers")
	var blocked atomic.Bool
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		b, err := sys.SignalBlocked(sys.TimerSignal)
		blocked.Store(b && err == nil)
		return loop(tc)
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	waitCycles(t, task, 20)
	require.True(t, blocked.Load())
	st := task.Stats()
	require.Equal(t, "posix-timer", st.Wake)
	require.Equal(t, "SCHED_FIFO", st.Policy)
	// The kernel counts the signals the thread took: /proc/TID/status SigQ is
	// process-wide, so check the thread's voluntary switches instead: one a cycle.
	task.Stop()
	require.NoError(t, task.Wait())
	require.GreaterOrEqual(t, task.Stats().VoluntarySwitches, int64(15))
}

func TestAffinity(t *testing.T) {
	cpus, err := sys.Affinity(0)
	require.NoError(t, err)
	last := cpus[len(cpus)-1]
	rt := open(t, rtapi.Options{Flavor: "posix"})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "pinned", Period: time.Millisecond, CPU: rtapi.OnCPU(last)}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	got, err := sys.Affinity(task.Tid())
	require.NoError(t, err)
	require.Equal(t, []int{last}, got)
	require.Equal(t, []int{last}, task.Stats().CPUs)

	rt2 := open(t, rtapi.Options{Flavor: "posix", CPUs: []int{last}})
	auto, err := rt2.NewTask(rtapi.TaskSpec{Name: "auto", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, auto.Start())
	got, err = sys.Affinity(auto.Tid())
	require.NoError(t, err)
	require.Equal(t, []int{last}, got, "Options.CPUs places CPUAuto tasks")
	free, err := rt2.NewTask(rtapi.TaskSpec{Name: "free", Period: time.Millisecond, CPU: rtapi.Unpinned}, loop)
	require.NoError(t, err)
	require.NoError(t, free.Start())
	got, err = sys.Affinity(free.Tid())
	require.NoError(t, err)
	require.Equal(t, cpus, got)
}

// A body that sleeps past its period causes overruns, under either policy
// and every wake mode; CatchUp keeps the cycle count, Skip drops releases.
func TestOverruns(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	const period = time.Millisecond
	for _, wake := range []rtapi.WakeMode{rtapi.WakeNanosleep, rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
		for _, policy := range []rtapi.OverrunPolicy{rtapi.CatchUp, rtapi.Skip} {
			name := wake.String() + "/" + policy.String()
			task, err := rt.NewTask(rtapi.TaskSpec{Name: name, Period: period, Wake: wake, Overrun: policy},
				func(tc *rtapi.TaskContext) error {
					for tc.WaitPeriod() {
						if tc.Cycle() == 5 {
							// Stall for 5 periods (a sleep, off any RT path: this is the fault).
							end := tc.Now() + int64(5*period)
							for tc.Now() < end {
								runtime.Gosched()
							}
						}
						if tc.Cycle() == 30 {
							return nil
						}
					}
					return nil
				})
			require.NoError(t, err)
			require.NoError(t, task.Start())
		}
	}
	for _, task := range rt.Tasks() {
		require.NoError(t, task.Wait())
		st := task.Stats()
		require.GreaterOrEqual(t, st.Overruns, int64(4), "task %s: %+v", task.Name(), st.Overruns)
		require.EqualValues(t, 30, st.Cycles)
		require.GreaterOrEqual(t, st.Exec.Max, int64(5*period))
	}
}

func TestPauseResume(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, wake := range []rtapi.WakeMode{rtapi.WakeNanosleep, rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
		// The body holds its 10th cycle until the test has paused it,
		// so the pause lands inside a cycle, deterministically: that
		// cycle finishes, and no other starts until Resume.
		const held = 10
		reached, paused := make(chan struct{}), make(chan struct{})
		var bodies atomic.Int64
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				for tc.WaitPeriod() {
					if bodies.Add(1) == held {
						close(reached)
						<-paused
					}
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		<-reached
		require.NoError(t, task.Pause())
		require.Equal(t, rtapi.TaskPaused, task.State())
		close(paused)
		// This sleep is what is tested: 300 periods pass while paused
		// (30 under -short).
		time.Sleep(time.Duration(rttest.Rounds(300)) * time.Millisecond)
		require.EqualValues(t, held, bodies.Load(), "a paused task runs no body")
		require.EqualValues(t, held, task.Stats().Cycles, "a paused task runs no cycles")
		before := int64(held)
		overruns := task.Stats().Overruns
		resumed := time.Now()
		require.NoError(t, task.Resume())
		waitCycles(t, task, before+10)
		// Overruns since Resume can only come from periods that passed
		// since Resume (the machine may be loaded); the 300 periods spent
		// paused must not show up.
		elapsed := int64(time.Since(resumed) / time.Millisecond)
		require.LessOrEqual(t, task.Stats().Overruns-overruns, elapsed+2,
			"time spent paused is not overruns (%v)", wake)
		// Stop while paused ends the task.
		require.NoError(t, task.Pause())
		task.Stop()
		require.NoError(t, task.Wait())
	}
}

func TestPanicEndsOnlyThatTask(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	good, err := rt.NewTask(rtapi.TaskSpec{Name: "good", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	bad, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "bad", Period: time.Millisecond}, func(c *rtapi.Cycle) {
		if c.Number() == 3 {
			panic(fmt.Errorf("encoder lost: %w", unix.EIO))
		}
	})
	require.NoError(t, err)
	require.NoError(t, good.Start())
	require.NoError(t, bad.Start())
	err = bad.Wait()
	var pe *rtapi.PanicError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "bad", pe.Task)
	require.ErrorIs(t, err, unix.EIO)
	require.Contains(t, string(pe.Stack), "rtapi_test")
	c := good.Stats().Cycles
	waitCycles(t, good, c+5)
	require.Equal(t, rtapi.TaskRunning, good.State())
}

func TestBodyErrorAndCycleStop(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	boom := errors.New("limit switch")
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "p", Period: time.Millisecond}, func(c *rtapi.Cycle) {
		if c.Number() == 4 {
			c.Stop(boom)
		}
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.ErrorIs(t, task.Wait(), boom)
	require.EqualValues(t, 4, task.Stats().Cycles)
}

func TestCloseStopsRunningAndReportsStuck(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", StopTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	release := make(chan struct{})
	stuck, err := rt.NewTask(rtapi.TaskSpec{Name: "stuck"}, func(*rtapi.TaskContext) error {
		<-release // never returns to WaitPeriod until released
		return nil
	})
	require.NoError(t, err)
	ok, err := rt.NewTask(rtapi.TaskSpec{Name: "ok", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, stuck.Start())
	require.NoError(t, ok.Start())
	err = rt.Close()
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	require.Contains(t, err.Error(), `"stuck"`)
	require.NoError(t, ok.Wait())
	close(release)
	require.NoError(t, stuck.Wait())
}

func TestDeleteFreesName(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	a, err := rt.NewTask(rtapi.TaskSpec{Name: "a", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, a.Start())
	require.NoError(t, a.Delete())
	_, ok := rt.Task("a")
	require.False(t, ok)
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "a"}, loop)
	require.NoError(t, err)
}

func TestAperiodicTask(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	var n atomic.Int64
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "events"}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			n.Add(1)
			runtime.Gosched()
		}
		if !tc.Stopping() {
			return errors.New("WaitPeriod returned false, but the task was not stopped")
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	rttest.WaitFor(t, "the aperiodic task: 100 cycles", func() bool { return n.Load() >= 100 })
	task.Stop()
	require.NoError(t, task.Wait())
}

func TestResyncAndPLL(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	type result struct {
		applied, clamped time.Duration
		gap              int64
	}
	res := make(chan result, 1)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "pll", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		var r result
		r.applied, _ = tc.SetPLLCorrection(2000)
		r.clamped, _ = tc.SetPLLCorrection(1e6)
		_, _ = tc.SetPLLCorrection(0)
		tc.WaitPeriod()
		ref := tc.PLLReference()
		// Stall 5 periods, then resync: no catch-up burst, no overruns.
		end := tc.Now() + 5e6
		for tc.Now() < end {
			runtime.Gosched()
		}
		tc.Resync()
		tc.WaitPeriod()
		r.gap = tc.Release() - ref
		res <- r
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, task.Wait())
	r := <-res
	require.EqualValues(t, 2000, r.applied)
	require.EqualValues(t, 10_000, r.clamped, "clamped to 1 % of the period")
	// Without Resync, CatchUp would run the next cycle for ref+1ms at once.
	require.GreaterOrEqual(t, r.gap, int64(6e6), "Resync must skip the stalled periods")

	tfd, err := rt.NewTask(rtapi.TaskSpec{Name: "tfd", Period: time.Millisecond, Wake: rtapi.WakeTimerfd},
		func(tc *rtapi.TaskContext) error {
			_, err := tc.SetPLLCorrection(10)
			return err
		})
	require.NoError(t, err)
	require.NoError(t, tfd.Start())
	require.ErrorIs(t, tfd.Wait(), rtapi.ErrNotSupported)
}

// The per-cycle path allocates nothing, on every wake mode.
func TestCycleAllocatesNothing(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, wake := range []rtapi.WakeMode{rtapi.WakeNanosleep, rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
		res := make(chan float64, 1)
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: 100 * time.Microsecond, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				for i := 0; i < 10; i++ { // warm up
					tc.WaitPeriod()
				}
				res <- testing.AllocsPerRun(200, func() {
					tc.WaitPeriod()
					_ = tc.Now()
					_ = tc.Deadline()
				})
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		require.NoError(t, task.Wait())
		require.Zero(t, <-res, "wake mode %v", wake)
	}
}

func TestNowAndDelay(t *testing.T) {
	a := rtapi.MonotonicNow()
	rtapi.Delay(5 * time.Microsecond)
	b := rtapi.MonotonicNow()
	require.GreaterOrEqual(t, b-a, int64(5000))
	a = rtapi.MonotonicNow()
	rtapi.Delay(time.Hour) // clamped to DelayMax
	require.Less(t, rtapi.MonotonicNow()-a, int64(time.Second))
	rtapi.Delay(-1)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = rtapi.MonotonicNow(); rtapi.Delay(time.Microsecond) }))
}

func TestParsers(t *testing.T) {
	p, err := rtapi.ParseOverrunPolicy("skip")
	require.NoError(t, err)
	require.Equal(t, rtapi.Skip, p)
	_, err = rtapi.ParseOverrunPolicy("drop")
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	w, err := rtapi.ParseWakeMode("timerfd")
	require.NoError(t, err)
	require.Equal(t, rtapi.WakeTimerfd, w)
}

// childResult is what an unprivileged child reports back.
type childResult struct {
	OpenErr   string `json:"open_err"`
	IsPerm    bool   `json:"is_perm"`
	Flavor    string `json:"flavor"`
	RealTime  bool   `json:"realtime"`
	Why       string `json:"why"`
	Policy    string `json:"policy"`
	Wake      string `json:"wake"`
	Cycles    int64  `json:"cycles"`
	StrictErr string `json:"strict_err"`
}

// child runs in a re-executed test binary, as an unprivileged user.
func child(mode string) int {
	if mode == "mainthread" {
		return childMainThread()
	}
	var r childResult
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", VanillaFIFO: rtapi.On})
	if err != nil {
		r.OpenErr = err.Error()
	} else {
		r.Flavor, r.RealTime, r.Why = rt.Flavor().Name, rt.Flavor().RealTime, rt.Flavor().Why
		task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
			for tc.Cycle() < 20 && tc.WaitPeriod() {
			}
			return nil
		})
		if err == nil {
			err = task.Start()
		}
		if err == nil {
			err = task.Wait()
		}
		if err != nil {
			r.OpenErr = err.Error()
		} else {
			st := task.Stats()
			r.Policy, r.Wake, r.Cycles = st.Policy, st.Wake, st.Cycles
		}
		rt.Close()
	}
	_, err = rtapi.Open(rtapi.Options{Flavor: "posix", VanillaFIFO: rtapi.On, Strict: rtapi.On})
	if err != nil {
		r.StrictErr = err.Error()
		r.IsPerm = errors.Is(err, rtapi.ErrPermission) && errors.Is(err, unix.EPERM)
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// Seed 000, for real: without the permission to set SCHED_FIFO the vanilla
// scheme keeps running SCHED_OTHER and says so; Strict refuses.
func TestVanillaFIFOWithoutPermission(t *testing.T) {
	cmd := rttest.ChildAs(t, rttest.Nobody, "unprivileged", "-test.run=^$")
	cmd.Env = append(cmd.Env, "RTAPI_FLAVOR=", "RTAPI_STRICT=")
	// No RLIMIT_RTPRIO either: a plain user.
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{Cur: 0, Max: lim.Max}))
	out, err := cmd.Output()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_RTPRIO, &lim))
	require.NoError(t, err, "child: %s", out)
	var r childResult
	require.NoError(t, json.Unmarshal(out, &r), "%s", out)
	require.Empty(t, r.OpenErr)
	require.Equal(t, "posix", r.Flavor)
	require.False(t, r.RealTime)
	require.Contains(t, r.Why, "SCHED_FIFO cannot be set")
	require.Contains(t, r.Why, "setcap cap_sys_nice")
	require.Equal(t, "SCHED_OTHER", r.Policy)
	require.Equal(t, "posix-timer", r.Wake, "Arvid's POSIX timers still wake the task")
	require.EqualValues(t, 20, r.Cycles)
	require.True(t, r.IsPerm, "strict error: %s", r.StrictErr)
	require.True(t, strings.Contains(r.StrictErr, "Strict refuses"), r.StrictErr)
}

// Close drains what task bodies logged and stops the drainer; the logger is
// unusable afterwards.
func TestCloseFlushesMessages(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix", Logger: zap.New(core)})
	require.NoError(t, err)
	log, err := rt.MsgLogger("servo")
	require.NoError(t, err)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			if tc.Cycle() == 3 {
				log.Warn("following error %d µm at cycle %d", msg.Int(42), msg.Int(tc.Cycle()))
				return nil
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, task.Wait())
	require.NoError(t, rt.Close())
	entries := logs.FilterMessageSnippet("following error").All()
	require.Len(t, entries, 1)
	require.Equal(t, zap.WarnLevel, entries[0].Level)
	require.Equal(t, "following error 42 µm at cycle 3", entries[0].Message)
	_, err = rt.MsgLogger("late")
	require.ErrorIs(t, err, rtapi.ErrClosed)
}
