//go:build linux

package sys_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// threadNice reads thread tid's nice value (getpriority returns 20 - nice).
func threadNice(t testing.TB, tid int) int {
	t.Helper()
	p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	require.NoError(t, err)
	return 20 - p
}

// Leaving SCHED_FIFO for SCHED_OTHER keeps the thread's nice value, whether
// the thread does it itself (the probe) or another thread does it by tid
// (the watchdog's demotion).
func TestSetSchedulerKeepsNice(t *testing.T) {
	rttest.RequireRT(t)
	// The thread's own calls, then a demotion by tid from this goroutine.
	// Nothing here may FailNow on the locked goroutine before the
	// hand-over: the values travel back instead.
	type step struct {
		what string
		nice int
		err  error
	}
	steps := make(chan step, 8)
	tids := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(steps)
		runtime.LockOSThread() // the thread dies with the goroutine
		tid := sys.Gettid()
		nice := func(what string, err error) {
			p, gerr := unix.Getpriority(unix.PRIO_PROCESS, tid)
			steps <- step{what, 20 - p, errors.Join(err, gerr)}
		}
		nice("renice", unix.Setpriority(unix.PRIO_PROCESS, tid, 7))
		nice("SCHED_OTHER to SCHED_OTHER", sys.SetScheduler(0, sys.SchedOther, 0))
		err := sys.SetScheduler(0, sys.SchedFIFO, 10)
		nice("back from SCHED_FIFO", errors.Join(err, sys.SetScheduler(0, sys.SchedOther, 0)))
		err = sys.SetScheduler(0, sys.SchedFIFO, 10)
		tids <- tid
		<-tids // demoted by the test goroutine meanwhile
		p, prio, serr := sys.Scheduler(0)
		if serr == nil && (p != sys.SchedOther || prio != 0) {
			serr = fmt.Errorf("demoted thread runs %v %d", p, prio)
		}
		nice("demoted by tid from another thread", errors.Join(err, serr))
	}()
	tid := <-tids
	require.NoError(t, sys.SetScheduler(tid, sys.SchedOther, 0))
	tids <- 0
	<-done
	for s := range steps {
		require.NoError(t, s.err, s.what)
		require.Equal(t, 7, s.nice, s.what)
	}
}

// The SCHED_FIFO probe hands its thread back to the Go runtime: in a niced
// process that thread must still be niced. The child is this test binary;
// it renices every one of its threads to 5, as nice -n 5 would have, then
// probes, then checks the nice value of every thread it has.
func TestProbeSchedFIFOKeepsNice(t *testing.T) {
	if rttest.ChildRole() == "niced-probe" {
		reniceAllThreads(t, 5)
		for range 20 {
			require.NoError(t, sys.ProbeSchedFIFO())
		}
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		for _, e := range tasks {
			tid, err := strconv.Atoi(e.Name())
			require.NoError(t, err)
			require.Equal(t, 5, threadNice(t, tid), "thread %d", tid)
		}
		return
	}
	rttest.RequireRT(t)
	cmd := rttest.Child("niced-probe", "-test.run=^TestProbeSchedFIFOKeepsNice$", "-test.v")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	require.True(t, strings.Contains(string(out), "--- PASS: TestProbeSchedFIFOKeepsNice"), "child:\n%s", out)
}

// reniceAllThreads sets the nice value of every thread of this process.
func reniceAllThreads(t *testing.T, nice int) {
	t.Helper()
	rttest.SettleAllThreads(t, func(tid int) bool {
		p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil || 20-p == nice {
			return false // the thread has exited meanwhile, or is niced
		}
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, nice) // checked on the next pass
		return true
	})
}

// The watchdog demotes a runaway thread from its allocation-free loop.
func TestSetSchedulerAllocs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // SCHED_OTHER before and after
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = sys.SetScheduler(0, sys.SchedOther, 0) }))
}

// A thread confined by its affinity may still be pinned anywhere in the
// cpuset: AllowedCPUs reports the cpuset, not the caller's affinity.
func TestAllowedCPUs(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	require.NoError(t, err)
	require.NotEmpty(t, allowed)
	done := make(chan struct{})
	var narrowed []int
	var nerr error
	go func() {
		defer close(done)
		runtime.LockOSThread() // the thread dies with the goroutine
		if nerr = sys.SetAffinity(0, allowed[:1]); nerr == nil {
			narrowed, nerr = sys.AllowedCPUs()
		}
	}()
	<-done
	require.NoError(t, nerr)
	require.Equal(t, allowed, narrowed)
}

// Every policy SetScheduler sets is reset on fork, so that a process the
// thread starts never inherits a real-time policy, and a later change
// never has to clear the flag (EPERM without CAP_SYS_NICE, which an
// rtprio-limit user lacks); Scheduler reports the bare policy.
func TestSetSchedulerResetsOnFork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, sys.SetScheduler(0, sys.SchedOther, 0))
	attr, err := unix.SchedGetAttr(0, 0)
	require.NoError(t, err)
	require.NotZero(t, attr.Flags&unix.SCHED_FLAG_RESET_ON_FORK, "sched_getattr flags %#x", attr.Flags)
	p, prio, err := sys.Scheduler(0)
	require.NoError(t, err)
	require.Equal(t, [2]any{sys.SchedOther, 0}, [2]any{p, prio})
	// a thread the runtime may reuse afterwards: the flag is harmless there
	require.NoError(t, sys.SetScheduler(0, sys.SchedOther, 0), "set again with the flag kept")
}
