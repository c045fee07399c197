package rtapi_test

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
)

// liveness is the generous bound of the watchdog tests: how long a thing
// that must happen may take on a loaded CI machine. It is a liveness
// bound, not a timing claim.
const liveness = 30 * time.Second

// lastCPU is the CPU the runaway tests share between the runaway task and
// an ordinary goroutine.
func lastCPU(t *testing.T) int {
	t.Helper()
	cpus, err := sys.Affinity(0)
	require.NoError(t, err)
	return cpus[len(cpus)-1]
}

// spinOn runs an ordinary (SCHED_OTHER) goroutine pinned to cpu that
// counts as fast as it can until stop is set. The thread is never unlocked,
// so its affinity dies with it.
func spinOn(t *testing.T, cpu int, count *atomic.Int64, stop *atomic.Bool) {
	t.Helper()
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ready <- sys.SetAffinity(0, []int{cpu})
		for !stop.Load() {
			count.Add(1)
		}
	}()
	require.NoError(t, <-ready)
}

// A SCHED_FIFO task spinning forever on a CPU it shares with an ordinary
// goroutine is demoted by the watchdog: Wait returns a *FaultError, the
// thread is SCHED_OTHER again, and the goroutine makes progress.
func TestWatchdogDemotesRunawayTask(t *testing.T) {
	rttest.RequireRT(t)
	cpu := lastCPU(t)
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off})

	var release atomic.Bool
	spinning := make(chan struct{})
	task, err := rt.NewTask(rtapi.TaskSpec{
		Name: "runaway", Period: time.Millisecond, CPU: rtapi.OnCPU(cpu), Watchdog: 20 * time.Millisecond,
	}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			if tc.Cycle() == 20 {
				close(spinning)
				for !release.Load() { // a runaway loop
				}
			}
		}
		return nil
	})
	require.NoError(t, err)

	var count atomic.Int64
	var stop atomic.Bool
	defer stop.Store(true)
	spinOn(t, cpu, &count, &stop)
	require.NoError(t, task.Start())

	select {
	case <-spinning:
	case <-time.After(liveness):
		t.Fatal("the task never reached its runaway loop")
	}
	select {
	case <-task.Faulted():
	case <-time.After(liveness):
		t.Fatalf("runaway task not faulted within %v", liveness)
	}
	err = task.Wait() // returns at once for a faulted task
	require.ErrorIs(t, err, rtapi.ErrFaulted)
	var fe *rtapi.FaultError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "runaway", fe.Task)
	require.Equal(t, task.Tid(), fe.Tid)
	require.NoError(t, fe.DemoteErr)
	require.GreaterOrEqual(t, fe.Stalled, 20*time.Millisecond)
	require.Contains(t, err.Error(), "demoted to SCHED_OTHER")
	policy, _, err := sys.Scheduler(fe.Tid)
	require.NoError(t, err)
	require.Equal(t, sys.SchedOther, policy, "the runaway thread keeps spinning, but as SCHED_OTHER")

	// The ordinary goroutine on the same CPU runs again.
	before := count.Load()
	rttest.WaitFor(t, "the goroutine sharing the CPU to run after demotion", func() bool {
		return count.Load() >= before+1_000_000
	})

	// Once its loop ends, the faulted task's WaitPeriod returns false and
	// the body returns; Wait still reports the fault.
	release.Store(true)
	select {
	case <-task.Done():
	case <-time.After(liveness):
		t.Fatal("the faulted body did not end after its loop was released")
	}
	require.ErrorIs(t, task.Wait(), rtapi.ErrFaulted)
}

// The watchdog leaves healthy tasks alone, paused ones included, and only
// faults the runaway one: the others keep running.
func TestWatchdogKeepsOthersRunning(t *testing.T) {
	rttest.RequireRT(t)
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off})
	// A generous timeout: a healthy task here may be held off its CPU by
	// the host for tens of milliseconds.
	const timeout = 500 * time.Millisecond
	healthy, err := rt.NewTask(rtapi.TaskSpec{Name: "healthy", Period: time.Millisecond, Watchdog: timeout}, loop)
	require.NoError(t, err)
	paused, err := rt.NewTask(rtapi.TaskSpec{Name: "paused", Period: time.Millisecond, Watchdog: timeout}, loop)
	require.NoError(t, err)
	var release atomic.Bool
	defer release.Store(true)
	runaway, err := rt.NewTask(rtapi.TaskSpec{Name: "runaway", Period: time.Millisecond, Watchdog: timeout},
		func(tc *rtapi.TaskContext) error {
			for tc.WaitPeriod() {
				if tc.Cycle() == 5 {
					for !release.Load() {
					}
				}
			}
			return nil
		})
	require.NoError(t, err)
	for _, task := range []*rtapi.Task{healthy, paused, runaway} {
		require.NoError(t, task.Start())
	}
	require.NoError(t, paused.Pause())
	select {
	case <-runaway.Faulted():
	case <-time.After(liveness):
		t.Fatal("runaway task not faulted")
	}
	// This sleep is what is tested: the paused task stays paused past
	// its watchdog timeout, and must not be faulted for it.
	time.Sleep(2 * timeout)
	require.NoError(t, paused.Resume())
	c := healthy.Stats().Cycles
	waitCycles(t, healthy, c+10)
	waitCycles(t, paused, paused.Stats().Cycles+10)
	select {
	case <-healthy.Faulted():
		t.Fatal("healthy task faulted")
	case <-paused.Faulted():
		t.Fatal("paused task faulted")
	default:
	}
	healthy.Stop()
	paused.Stop()
	require.NoError(t, healthy.Wait())
	require.NoError(t, paused.Wait())
	require.ErrorIs(t, runaway.Wait(), rtapi.ErrFaulted)
	release.Store(true)
	<-runaway.Done()
}

// Close returns, bounded, with a SCHED_FIFO task spinning on the CPU: the
// watchdog demotes it and Close reports it as not stopped.
func TestCloseWithSpinningFIFOTask(t *testing.T) {
	rttest.RequireRT(t)
	cpu := lastCPU(t)
	rt, err := rtapi.Open(rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	var release atomic.Bool
	defer release.Store(true)
	spinning := make(chan struct{})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "spinner", Period: time.Millisecond, CPU: rtapi.OnCPU(cpu),
		Watchdog: 20 * time.Millisecond},
		func(tc *rtapi.TaskContext) error {
			tc.WaitPeriod()
			close(spinning)
			for !release.Load() {
			}
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	<-spinning
	closed := make(chan error, 1)
	go func() { closed <- rt.Close() }()
	select {
	case err = <-closed:
	case <-time.After(liveness):
		t.Fatal("Close did not return with a spinning task")
	}
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	require.Contains(t, err.Error(), `"spinner"`)
	require.ErrorIs(t, task.Wait(), rtapi.ErrFaulted)
	release.Store(true)
	<-task.Done()
}

// Flavors that are not real-time run no watchdog: a stuck task there is
// only reported by Close.
func TestWatchdogOnlyOnRealTimeFlavors(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	release := make(chan struct{})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "slow", Period: time.Millisecond, Watchdog: time.Millisecond},
		func(tc *rtapi.TaskContext) error {
			tc.WaitPeriod()
			<-release
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	// This sleep is what is tested: fifty watchdog timeouts pass while
	// the body blocks, and a posix task must not be faulted for them.
	time.Sleep(50 * time.Millisecond)
	select {
	case <-task.Faulted():
		t.Fatal("a posix task was faulted")
	default:
	}
	close(release)
	task.Stop()
	require.NoError(t, task.Wait())
}

func TestFaultErrorText(t *testing.T) {
	e := &rtapi.FaultError{Task: "servo", Timeout: 55 * time.Millisecond, Stalled: 60 * time.Millisecond, Cycles: 7, Tid: 42}
	require.ErrorIs(t, e, rtapi.ErrFaulted)
	require.Equal(t, `task "servo" faulted: no cycle completed for 60ms (watchdog timeout 55ms, after 7 cycles); tid 42 demoted to SCHED_OTHER`, e.Error())
	e.DemoteErr = errors.New("boom")
	require.Contains(t, e.Error(), "demoting tid 42 to SCHED_OTHER failed: boom")
	require.ErrorIs(t, e, e.DemoteErr)
}
