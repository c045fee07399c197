package rtapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// realTimeThreads lists the threads of this process that run a real-time
// policy.
func realTimeThreads(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var rt []string
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		require.NoError(t, err)
		policy, prio, err := sys.Scheduler(tid)
		if err != nil {
			continue // the thread is gone
		}
		if policy != sys.SchedOther {
			rt = append(rt, fmt.Sprintf("tid %d: %v %d", tid, policy, prio))
		}
	}
	return rt
}

// vanillaFIFO opens the posix flavor with VanillaFIFO: SCHED_FIFO task
// threads and a watchdog on any kernel.
func vanillaFIFO(t *testing.T, o rtapi.Options) *rtapi.RT {
	t.Helper()
	rttest.RequireRT(t)
	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	o.Kernel, o.Flavor, o.VanillaFIFO, o.LockMemory = k, "posix", rtapi.On, rtapi.Off
	return open(t, o)
}

var wakeModes = []rtapi.WakeMode{rtapi.WakeNanosleep, rtapi.WakeTimerfd, rtapi.WakePosixTimer}

// mainThreadResult is what the "mainthread" child reports.
type mainThreadResult struct {
	Err           string `json:"err"`
	Pid           int    `json:"pid"`
	TaskTid       int    `json:"task_tid"`
	RealTime      []int  `json:"realtime"`
	AffinityKept  bool   `json:"affinity_kept"`
	MainPolicy    string `json:"main_policy"`
	WatchdogSeen  bool   `json:"watchdog_seen"`
	TaskAffinity  []int  `json:"task_affinity"`
	StartAffinity []int  `json:"start_affinity"`
}

// childMainThread starts a task from the main goroutine (what a program's
// main does), stops it, closes, and reports which thread ran it and which
// threads are left real-time.
func childMainThread() int {
	var r mainThreadResult
	r.Pid = os.Getpid()
	fail := func(err error) int {
		r.Err = err.Error()
		json.NewEncoder(os.Stdout).Encode(r)
		return 0
	}
	before, err := sys.Affinity(r.Pid)
	if err != nil {
		return fail(err)
	}
	r.StartAffinity = before
	k, err := kerneldetect.Detect()
	if err != nil {
		return fail(err)
	}
	rt, err := rtapi.Open(rtapi.Options{Kernel: k, Flavor: "posix", VanillaFIFO: rtapi.On, LockMemory: rtapi.Off,
		CPUs: before[len(before)-1:]})
	if err != nil {
		return fail(err)
	}
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	if err != nil {
		return fail(err)
	}
	if err := task.Start(); err != nil {
		return fail(err)
	}
	r.TaskTid = task.Tid()
	r.TaskAffinity, _ = sys.Affinity(r.TaskTid)
	for task.Stats().Cycles < 5 {
		time.Sleep(time.Millisecond)
	}
	task.Stop()
	if err := task.Wait(); err != nil {
		return fail(err)
	}
	if err := rt.Close(); err != nil {
		return fail(err)
	}
	// A locked thread leaves after its goroutine has ended, when the
	// machine's load lets it: wait for that, not for a while.
	for deadline := time.Now().Add(rttest.WaitTimeout); ; time.Sleep(10 * time.Millisecond) {
		r.RealTime = r.RealTime[:0]
		entries, _ := os.ReadDir("/proc/self/task")
		for _, e := range entries {
			tid, _ := strconv.Atoi(e.Name())
			if policy, _, err := sys.Scheduler(tid); err == nil && policy != sys.SchedOther {
				r.RealTime = append(r.RealTime, tid)
			}
		}
		if len(r.RealTime) == 0 || time.Now().After(deadline) {
			break
		}
	}
	policy, _, _ := sys.Scheduler(r.Pid)
	r.MainPolicy = policy.String()
	after, _ := sys.Affinity(r.Pid)
	r.AffinityKept = len(after) == len(before)
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// A task started from main never runs on the main thread (which gets the
// process-directed signals and which Go cannot destroy), and no thread is
// left real-time once its task and the watchdog have ended.
func TestTaskNeverOnMainThread(t *testing.T) {
	rttest.RequireRT(t)
	for i := 0; i < 3; i++ {
		cmd := rttest.Child("mainthread", "-test.run=^$")
		cmd.Env = append(cmd.Env, "RTAPI_FLAVOR=", "RTAPI_CPU=")
		out, err := cmd.Output()
		require.NoError(t, err, "child: %s", out)
		var r mainThreadResult
		require.NoError(t, json.Unmarshal(out, &r), "%s", out)
		require.Empty(t, r.Err)
		require.NotZero(t, r.TaskTid)
		require.NotEqual(t, r.Pid, r.TaskTid, "the task ran on the main thread")
		require.Equal(t, r.StartAffinity[len(r.StartAffinity)-1:], r.TaskAffinity)
		require.Empty(t, r.RealTime, "threads left real-time after Close")
		require.Equal(t, "SCHED_OTHER", r.MainPolicy)
		require.True(t, r.AffinityKept, "the main thread kept a task's affinity")
	}
}

// runtime.Goexit in a body (t.FailNow, testify's require) ends the task
// like a return: Wait returns, the timer is released, Close succeeds and
// the watchdog goes away.
func TestGoexitInBodyEndsTheTask(t *testing.T) {
	rttest.RequireRT(t) // its lock file is open before the count
	fds := func() int {
		e, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(e)
	}
	before := fds()
	rt := vanillaFIFO(t, rtapi.Options{StopTimeout: 5 * time.Second})
	var tasks []*rtapi.Task
	for _, wake := range wakeModes {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				for tc.WaitPeriod() {
					if tc.Cycle() == 3 {
						runtime.Goexit()
					}
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		select {
		case <-task.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("task %s: Done never closed after runtime.Goexit", task.Name())
		}
		err := task.Wait()
		require.ErrorIs(t, err, rtapi.ErrGoexit, "task %s", task.Name())
		require.Equal(t, rtapi.TaskDone, task.State())
	}
	require.NoError(t, rt.Close())
	require.Equal(t, before, fds(), "a timerfd leaked")
	require.Empty(t, realTimeThreads(t), "a task thread or the watchdog is still real-time")
}

// Stop wakes a task asleep until a release far away, in every wake mode,
// with and without the runtime guard, and Close finds it stopped.
func TestStopWakesASleepingTask(t *testing.T) {
	setups := map[string]rtapi.Options{"posix": {Flavor: "posix", StopTimeout: 5 * time.Second},
		"posix, guard on": {Flavor: "posix", RuntimeGuard: rtapi.On, LockMemory: rtapi.Off, StopTimeout: 5 * time.Second}}
	if sys.ProbeSchedFIFO() == nil {
		k, err := kerneldetect.Detect()
		require.NoError(t, err)
		setups["vanilla-fifo"] = rtapi.Options{Kernel: k, Flavor: "posix", VanillaFIFO: rtapi.On, LockMemory: rtapi.Off,
			StopTimeout: 5 * time.Second}
	} else {
		rttest.RequireRT(t)
	}
	for name, o := range setups {
		t.Run(name, func(t *testing.T) {
			rt, err := rtapi.Open(o)
			require.NoError(t, err)
			specs := []rtapi.TaskSpec{{Name: "auto", Wake: rtapi.WakeAuto}}
			for _, wake := range wakeModes {
				specs = append(specs, rtapi.TaskSpec{Name: wake.String(), Wake: wake})
			}
			var tasks []*rtapi.Task
			var entered atomic.Int32
			for _, spec := range specs {
				spec.Period = time.Minute
				task, err := rt.NewTask(spec, func(tc *rtapi.TaskContext) error {
					entered.Add(1)
					return loop(tc)
				})
				require.NoError(t, err)
				require.NoError(t, task.Start())
				tasks = append(tasks, task)
			}
			// Wait until every task sleeps in its first WaitPeriod.
			rttest.WaitFor(t, "every task asleep", func() bool {
				if int(entered.Load()) < len(tasks) {
					return false
				}
				for _, task := range tasks {
					if !rttest.Asleep(task.Tid()) {
						return false
					}
				}
				return true
			})
			require.NoError(t, rt.Close(), "Close must find every task stopped, not wait a minute")
			for _, task := range tasks {
				require.Equal(t, rtapi.TaskDone, task.State(), task.Name())
				require.Zero(t, task.Stats().Cycles, "%s: the release a minute away never came", task.Name())
			}
		})
	}
}

// Pause while the task sleeps: once Pause has returned, the body does not
// run again until Resume.
func TestPauseWhileSleepingRunsNoMoreBody(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rt := open(t, rtapi.Options{Flavor: "posix"})
	const period = 100 * time.Millisecond
	type run struct {
		task  *rtapi.Task
		count atomic.Int64
	}
	var runs []*run
	for _, wake := range wakeModes {
		r := &run{}
		task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: wake.String(), Period: period, Wake: wake},
			func(*rtapi.Cycle) { r.count.Add(1) })
		require.NoError(t, err)
		r.task = task
		runs = append(runs, r)
		require.NoError(t, task.Start())
	}
	for _, r := range runs {
		rttest.WaitFor(t, r.task.Name()+": 2 cycles, then asleep", func() bool {
			return r.count.Load() >= 2 && rttest.Asleep(r.task.Tid())
		})
	}
	before := make([]int64, len(runs))
	for i, r := range runs {
		require.NoError(t, r.task.Pause())
		before[i] = r.count.Load()
	}
	// This sleep is what is tested: three periods pass while paused.
	time.Sleep(3 * period)
	for i, r := range runs {
		// A release the task won just before Pause (its body not yet
		// counted) may still run: at most one body, never another.
		require.LessOrEqual(t, r.count.Load(), before[i]+1, "%s: the body ran after Pause returned", r.task.Name())
		require.NoError(t, r.task.Resume())
	}
	for i, r := range runs {
		rttest.WaitFor(t, r.task.Name()+": 2 cycles after Resume", func() bool { return r.count.Load() >= before[i]+3 })
	}
}

// Two Close calls at once: both return only when every task has stopped.
func TestConcurrentCloseWaitsForTasks(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	var ended atomic.Bool
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "slow", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
		}
		time.Sleep(300 * time.Millisecond) // a slow shutdown: what Close must wait for
		ended.Store(true)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	waitCycles(t, task, 3)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	var early atomic.Int32
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- rt.Close()
			if !ended.Load() {
				early.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, early.Load(), "a Close returned while the task was still stopping")
}

// A body overrunning its period once, by 0.3 of a period, is one overrun
// in every wake mode; Skip drops that release, CatchUp runs it late.
func TestOneOverrunInEveryWakeMode(t *testing.T) {
	var rt *rtapi.RT
	if sys.ProbeSchedFIFO() == nil {
		rt = vanillaFIFO(t, rtapi.Options{})
	} else {
		rt = open(t, rtapi.Options{Flavor: "posix"})
	}
	const period = 20 * time.Millisecond
	type result struct {
		task     *rtapi.Task
		policy   rtapi.OverrunPolicy
		deadline [8]int64
	}
	var results []*result
	for _, wake := range wakeModes {
		for _, policy := range []rtapi.OverrunPolicy{rtapi.CatchUp, rtapi.Skip} {
			r := &result{policy: policy}
			task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String() + "/" + policy.String(), Period: period,
				Wake: wake, Overrun: policy, Watchdog: -1},
				func(tc *rtapi.TaskContext) error {
					for tc.WaitPeriod() {
						c := tc.Cycle()
						r.deadline[c] = tc.Release()
						if c == 3 {
							end := tc.Now() + int64(period)*13/10
							for tc.Now() < end {
								runtime.Gosched()
							}
						}
						if c == 7 {
							return nil
						}
					}
					return nil
				})
			require.NoError(t, err)
			r.task = task
			results = append(results, r)
			require.NoError(t, task.Start())
		}
	}
	for _, r := range results {
		require.NoError(t, r.task.Wait())
		st := r.task.Stats()
		require.GreaterOrEqual(t, st.Overruns, int64(1), "%s: the late release was not counted", r.task.Name())
		gap := r.deadline[4] - r.deadline[3]
		if r.policy == rtapi.Skip {
			require.GreaterOrEqual(t, gap, 2*int64(period), "%s: the missed release was run, not skipped", r.task.Name())
		} else {
			require.Equal(t, int64(period), gap, "%s: CatchUp runs every release", r.task.Name())
		}
	}
}

// Durations in a TaskSpec are bounded: a period near MaxInt64 overflowed
// the deadline arithmetic.
func TestTaskSpecBounds(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, spec := range []rtapi.TaskSpec{
		{Name: "p", Period: 1<<63 - 1},
		{Name: "p", Period: rtapi.MaxPeriod + 1},
		{Name: "p", Period: time.Millisecond, Watchdog: 1<<63 - 1},
		{Name: "p", Period: time.Millisecond, LateThreshold: 1<<63 - 1},
		{Name: "p", StackPrefault: rtapi.MaxStackPrefault + 1},
	} {
		_, err := rt.NewTask(spec, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "%+v", spec)
	}
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "max", Period: rtapi.MaxPeriod, Wake: rtapi.WakeTimerfd}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	task.Stop()
	require.NoError(t, task.Wait())
	require.Zero(t, task.Stats().Cycles)
}

// gortapi's timer signal, sent to the process by kill(2), reaches a
// program that asked for it with signal.Notify while a posix-timer task
// collects its own instances on its thread.
func TestTimerSignalNotStolenFromTheProgram(t *testing.T) {
	rt := vanillaFIFO(t, rtapi.Options{})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: 50 * time.Microsecond, Wake: rtapi.WakePosixTimer,
		Watchdog: -1}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	sig := syscall.Signal(rtapi.DefaultTimerSignal)
	c := make(chan os.Signal, 1)
	signal.Notify(c, sig)
	defer signal.Stop(c)
	for i := 0; i < 300; i++ {
		require.NoError(t, unix.Kill(os.Getpid(), sig))
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Fatalf("kill %d of the timer signal never reached signal.Notify: the task thread took it", i)
		}
	}
	require.Positive(t, task.Stats().Cycles)
}

// Options.TimerSignal picks the signal; a signal that is not a free
// real-time one is refused.
func TestTimerSignalOption(t *testing.T) {
	for _, bad := range []int{9, 32, 33, 65, -1} {
		_, err := rtapi.Open(rtapi.Options{Flavor: "posix", TimerSignal: bad})
		require.ErrorIs(t, err, rtapi.ErrInvalid, "signal %d", bad)
	}
	rt := open(t, rtapi.Options{Flavor: "posix", TimerSignal: 45})
	var blocked45, blockedDefault atomic.Bool
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Wake: rtapi.WakePosixTimer},
		func(tc *rtapi.TaskContext) error {
			b, err := sys.SignalBlocked(45)
			blocked45.Store(b && err == nil)
			b, err = sys.SignalBlocked(unix.Signal(rtapi.DefaultTimerSignal))
			blockedDefault.Store(b || err != nil)
			return loop(tc)
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	waitCycles(t, task, 5)
	task.Stop()
	require.NoError(t, task.Wait())
	require.True(t, blocked45.Load())
	require.False(t, blockedDefault.Load())
	require.False(t, errors.Is(task.Wait(), rtapi.ErrInvalid))
}

// dmaLatencyHeld reports whether this process holds /dev/cpu_dma_latency
// open, the VanillaFIFO hardening's latency request.
func dmaLatencyHeld(t testing.TB) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == "/dev/cpu_dma_latency" {
			return true
		}
	}
	return false
}

// Close abandons a task that will not stop, but does not release the
// flavor (memory lock, latency request) under it: that waits for the task
// to end.
func TestCloseKeepsTheFlavorWhileATaskRuns(t *testing.T) {
	rttest.RequireRT(t)
	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	rt, err := rtapi.Open(rtapi.Options{Kernel: k, Flavor: "posix", VanillaFIFO: rtapi.On, LockMemory: rtapi.Off,
		StopTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	if !dmaLatencyHeld(t) {
		t.Skip("the flavor holds no /dev/cpu_dma_latency here (see Flavor().Why): nothing to observe")
	}
	release := make(chan struct{})
	stuck, err := rt.NewTask(rtapi.TaskSpec{Name: "stuck"}, func(*rtapi.TaskContext) error {
		<-release
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, stuck.Start())
	require.ErrorIs(t, rt.Close(), rtapi.ErrTimeout)
	require.True(t, dmaLatencyHeld(t), "the flavor was released while a task still runs")
	close(release)
	<-stuck.Done()
	deadline := time.Now().Add(10 * time.Second)
	for dmaLatencyHeld(t) {
		require.True(t, time.Now().Before(deadline), "the flavor was never released after the task ended")
		time.Sleep(time.Millisecond)
	}
}

// A body that calls runtime.UnlockOSThread once (a stray unlock, or a
// library's Lock/Unlock pair the wrong way round) still ends with its
// thread destroyed, not handed back to Go's pool with the task's policy,
// affinity and blocked timer signal (issue 21, defect 6). The thread's
// going is the event awaited: Go never ends a pooled thread.
func TestStrayUnlockStillDestroysTheThread(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, wake := range wakeModes {
		if e := rttest.Emulator(); e != "" && wake == rtapi.WakePosixTimer {
			continue // see flavors' TestWakerInterrupt
		}
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				runtime.UnlockOSThread()
				for tc.Cycle() < 3 && tc.WaitPeriod() {
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		tid := task.Tid()
		require.NoError(t, task.Wait())
		rttest.WaitFor(t, "task "+task.Name()+"'s thread "+strconv.Itoa(tid)+" gone", func() bool {
			_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
			return os.IsNotExist(err)
		})
	}
}

// Every Toggle of a TaskSpec is Auto, On or Off: another value is
// ErrInvalid naming the field, as for Options (issue 21, defect 7:
// Interference took Toggle(5)).
func TestTaskSpecTogglesValidated(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, spec := range []rtapi.TaskSpec{
		{Name: "i", Period: time.Millisecond, Interference: -2},
	} {
		_, err := rt.NewTask(spec, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "%+v", spec)
	}
	_, err := rt.NewTask(rtapi.TaskSpec{Name: "i", Period: time.Millisecond, Interference: 5}, loop)
	require.ErrorContains(t, err, "Interference")
}

// Wait, WaitContext, Delete and RT.Close called from a task's own body
// would wait for that body: each returns ErrState at once instead (issue
// 21's unconfirmed item: they deadlocked or burnt StopTimeout).
func TestLifecycleFromOwnBodyIsRefused(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix", StopTimeout: rttest.WaitTimeout})
	calls := make(chan []error, 1)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "self", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		tc.WaitPeriod()
		self := tc.Task()
		calls <- []error{self.Wait(), self.WaitContext(context.Background()), self.Delete(), rt.Close()}
		for tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	var errs []error
	select {
	case errs = <-calls:
	case <-time.After(rttest.WaitTimeout):
		t.Fatalf("a lifecycle call from the task's own body still blocked after %v", rttest.WaitTimeout)
	}
	for i, err := range errs {
		require.ErrorIs(t, err, rtapi.ErrState, "call %d", i)
	}
	require.Equal(t, rtapi.TaskRunning, task.State())
}

// A TaskContext kept past its body's return is dead: WaitPeriod returns
// false at once, in every wake mode, rather than spin on the closed timer
// (issue 21's unconfirmed item: EBADF in a loop in the timer modes).
func TestWaitPeriodAfterTheBodyReturned(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, wake := range wakeModes {
		if e := rttest.Emulator(); e != "" && wake == rtapi.WakePosixTimer {
			continue // see flavors' TestWakerInterrupt
		}
		var kept *rtapi.TaskContext
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				tc.WaitPeriod()
				kept = tc
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		require.NoError(t, task.Wait())
		result := make(chan bool, 1)
		go func() {
			runtime.LockOSThread() // as a task body's goroutine; never unlocked
			result <- kept.WaitPeriod()
		}()
		select {
		case ok := <-result:
			require.False(t, ok, wake.String())
		case <-time.After(rttest.WaitTimeout):
			t.Fatalf("%v: WaitPeriod on a dead TaskContext still running after %v", wake, rttest.WaitTimeout)
		}
		require.Zero(t, task.Stats().WaitErrors, wake.String())
	}
}
