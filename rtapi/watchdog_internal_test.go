package rtapi

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/guard"
	"github.com/gortapi/gortapi/internal/rttest"
)

// The guard process starts with the first watched task and ends with
// the RT.
func TestWatchdogGoesAwayWithItsTasks(t *testing.T) {
	rttest.RequireRT(t)
	rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off})
	require.NoError(t, err)
	task, err := rt.NewTask(TaskSpec{Name: "watched", Period: time.Millisecond}, func(tc *TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	g := rt.runningGuard()
	require.NotNil(t, g, "a watched task starts the guard")
	require.Same(t, g, task.wd.g)
	pid := g.Pid()
	require.NoError(t, rt.Close()) // waits for the guard to exit
	require.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "the guard process is gone")
}

func TestWatchTimeout(t *testing.T) {
	require.Equal(t, 5*time.Millisecond+DefaultWatchdogSlack, watchTimeout(TaskSpec{Period: time.Millisecond}))
	require.Equal(t, time.Second, watchTimeout(TaskSpec{Period: time.Millisecond, Watchdog: time.Second}))
	require.Zero(t, watchTimeout(TaskSpec{Period: time.Millisecond, Watchdog: -1}))
	require.Zero(t, watchTimeout(TaskSpec{}), "a task that is not periodic is not watched unless asked")
	require.Equal(t, time.Second, watchTimeout(TaskSpec{Watchdog: time.Second}))
}

// Tasks that end or are deleted leave the guard and give their slot of
// the shared page back.
func TestWatchdogForgetsEndedTasks(t *testing.T) {
	rttest.RequireRT(t)
	rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off})
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	body := func(tc *TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	}
	var tasks []*Task
	for _, name := range []string{"kept", "deleted", "ended"} {
		task, err := rt.NewTask(TaskSpec{Name: name, Period: time.Millisecond}, body)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		tasks = append(tasks, task)
	}
	g := rt.runningGuard()
	require.Equal(t, 3, g.SlotsInUse())
	require.NoError(t, tasks[1].Delete())
	tasks[2].Stop()
	require.NoError(t, tasks[2].Wait())
	require.Equal(t, 1, g.SlotsInUse(), "ended and deleted tasks stay watched")
	require.Same(t, g, tasks[0].wd.g)
}

// WaitContext, like Wait, returns for a faulted task only once the task's
// SafeState has run. The fault is injected; nothing runs SCHED_FIFO.
func TestWaitContextWaitsForSafeStateOnFault(t *testing.T) {
	t.Parallel()
	rt, err := Open(Options{Flavor: "posix", LockMemory: Off})
	require.NoError(t, err)
	release, bodyDone := make(chan struct{}), make(chan struct{})
	var safeRan atomic.Bool
	task, err := rt.NewTask(TaskSpec{Name: "faulted", SafeState: func() {
		<-release
		safeRan.Store(true)
	}}, func(*TaskContext) error {
		<-bodyDone
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	task.fault(guard.Event{Tid: task.Tid(), Fault: true})

	got := make(chan bool, 1)
	go func() {
		_ = task.WaitContext(context.Background())
		got <- safeRan.Load()
	}()
	// Release SafeState once WaitContext blocks; a WaitContext that
	// returns first has not waited for it.
	rttest.WaitFor(t, "WaitContext to block or return", func() bool {
		if len(got) > 0 {
			return true
		}
		buf := make([]byte, 1<<20)
		for _, g := range bytes.Split(buf[:runtime.Stack(buf, true)], []byte("\n\n")) {
			if bytes.Contains(g, []byte("(*Task).WaitContext")) && (bytes.Contains(g, []byte("[select")) || bytes.Contains(g, []byte("[chan receive"))) {
				return true
			}
		}
		return false
	})
	close(release)
	require.True(t, <-got, "WaitContext returned before SafeState ran")
	close(bodyDone)
	<-task.Done()
	require.NoError(t, rt.Close())
}
