package rtapi_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/rtapi"
)

// On a real flavor, a body that runs past its deadline every cycle trips
// MaxOverruns: the task ends with a *DeadlineError after that many cycles
// in a row, and its safe state runs once, on the task's thread.
// The body spins until its deadline has passed, so every cycle overruns
// whatever the machine's load.
func TestDeadlinePolicyOnPosix(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	var safe, safeTid, bodyTid atomic.Int64
	var faulted atomic.Bool
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "overrun", Period: time.Millisecond, Watchdog: -1,
		DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 3},
		SafeState: func() {
			safe.Add(1)
			safeTid.Store(int64(unix.Gettid()))
		}},
		func(tc *rtapi.TaskContext) error {
			bodyTid.Store(int64(unix.Gettid()))
			for tc.WaitPeriod() {
				if tc.Cycle() >= 5 {
					for tc.Now() <= tc.Deadline() {
					}
				}
			}
			faulted.Store(tc.Faulted())
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	err = task.Wait()
	require.ErrorIs(t, err, rtapi.ErrFaulted)
	var de *rtapi.DeadlineError
	require.True(t, errors.As(err, &de), "%v", err)
	require.EqualValues(t, 3, de.Overruns)
	// A loaded machine may make early cycles overrun too: the run of
	// three may end before cycle 7, never after it.
	require.LessOrEqual(t, de.Cycle, int64(7))
	require.GreaterOrEqual(t, de.Cycle, int64(2), "cycles 0, 1 and 2 at the earliest")
	require.EqualValues(t, 1, safe.Load())
	require.True(t, faulted.Load(), "TaskContext.Faulted after WaitPeriod returned false")
	require.Equal(t, bodyTid.Load(), safeTid.Load(), "the safe state runs on the task's thread")
}

// The deadline accessors and the policy check allocate nothing.
func TestDeadlineAccessorsAllocateNothing(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	res := make(chan float64, 1)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "acc", Period: 100 * time.Microsecond, Watchdog: -1,
		DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 1 << 30, MaxLate: time.Hour}},
		func(tc *rtapi.TaskContext) error {
			for i := 0; i < 10; i++ {
				tc.WaitPeriod()
			}
			res <- testing.AllocsPerRun(200, func() {
				tc.WaitPeriod()
				_, _, _ = tc.Release(), tc.Deadline(), tc.Late()
				_, _, _ = tc.Missed(), tc.Overruns(), tc.Faulted()
			})
			return nil
		})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, task.Wait())
	require.Zero(t, <-res)
}
