package rtapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// The watchdog thread exists only while there is a task to watch, and a
// closed RT is forgotten.
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
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	require.NotNil(t, wd, "a watched task starts the watchdog")
	require.NotZero(t, wd.tid.Load())
	require.NoError(t, rt.Close()) // waits for the watchdog to exit
	wd.mu.Lock()
	defer wd.mu.Unlock()
	require.False(t, wd.running)
}

func TestWatchTimeout(t *testing.T) {
	require.Equal(t, 5*time.Millisecond+DefaultWatchdogSlack, watchTimeout(TaskSpec{Period: time.Millisecond}))
	require.Equal(t, time.Second, watchTimeout(TaskSpec{Period: time.Millisecond, Watchdog: time.Second}))
	require.Zero(t, watchTimeout(TaskSpec{Period: time.Millisecond, Watchdog: -1}))
	require.Zero(t, watchTimeout(TaskSpec{}), "a task that is not periodic is not watched unless asked")
	require.Equal(t, time.Second, watchTimeout(TaskSpec{Watchdog: time.Second}))
}

// Tasks that end or are deleted leave the watchdog's list, which its
// priority-99 loop scans every tick.
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
	rt.mu.Lock()
	wd := rt.wd
	rt.mu.Unlock()
	require.Len(t, *wd.tasks.Load(), 3)
	require.NoError(t, tasks[1].Delete())
	tasks[2].Stop()
	require.NoError(t, tasks[2].Wait())
	list := *wd.tasks.Load()
	require.Len(t, list, 1, "ended and deleted tasks stay watched")
	require.Same(t, tasks[0], list[0])
}

// The watchdog leaves only if the list in which it found nothing live is
// still the current one. Here a task was added and an ended one removed
// between the scan and the exit: same length, another list, and the new
// task must stay watched.
func TestWatchdogStaysForATaskAddedDuringItsExit(t *testing.T) {
	ended, added := new(Task), new(Task)
	wd := &watchdog{running: true, reports: make(chan *FaultError)}
	seen := &[]*Task{ended}
	wd.tasks.Store(&[]*Task{added})
	require.False(t, wd.leave(seen), "left with a task added since the scan")
	require.True(t, wd.running)
	require.Equal(t, []*Task{added}, *wd.tasks.Load())

	require.True(t, wd.leave(wd.tasks.Load()), "stayed with its list unchanged")
	require.False(t, wd.running)
	require.Empty(t, *wd.tasks.Load())
}
