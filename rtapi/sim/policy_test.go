package sim_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
)

// Release, Deadline, Late and Missed around an overrun: cycle 3 runs from
// 3 to 5.5 ms, so the releases at 4 and 5 ms passed while it ran. Under
// CatchUp they run late, back to back; under Skip they are dropped.
func TestSimReleaseDeadlineLateMissed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy rtapi.OverrunPolicy
		want   []string
	}{
		{rtapi.CatchUp, []string{
			"#2 release 2ms deadline 3ms late 0s missed 0",
			"#3 release 3ms deadline 4ms late 0s missed 0",
			"#4 release 4ms deadline 5ms late 1.5ms missed 1",
			"#5 release 5ms deadline 6ms late 500µs missed 1",
			"#6 release 6ms deadline 7ms late 0s missed 0",
		}},
		{rtapi.Skip, []string{
			"#2 release 2ms deadline 3ms late 0s missed 0",
			"#3 release 3ms deadline 4ms late 0s missed 0",
			"#4 release 6ms deadline 7ms late 0s missed 2",
			"#5 release 7ms deadline 8ms late 0s missed 0",
			"#6 release 8ms deadline 9ms late 0s missed 0",
		}},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			rt, c := openSim(t, nil)
			var got []string
			task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "p", Period: time.Millisecond, Overrun: tc.policy},
				func(cy *rtapi.Cycle) {
					tc := cy.Context()
					if n := tc.Cycle(); n >= 2 && n <= 6 {
						got = append(got, fmt.Sprintf("#%d release %v deadline %v late %v missed %d", n,
							time.Duration(tc.Release()), time.Duration(tc.Deadline()), tc.Late(), tc.Missed()))
					}
				})
			require.NoError(t, err)
			require.NoError(t, c.InjectOverrun(task, 3, 2500*time.Microsecond))
			require.NoError(t, task.Start())
			require.NoError(t, c.Advance(10*time.Millisecond))
			require.Equal(t, tc.want, got)
			require.EqualValues(t, 2, task.Stats().Overruns)
		})
	}
}

// A task that is not periodic has no deadline.
func TestSimDeadlineOfTaskNotPeriodic(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	res := make(chan int64, 1)
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "once"}, func(tc *rtapi.TaskContext) error {
		res <- tc.Deadline()
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(time.Millisecond))
	require.NoError(t, task.Wait())
	require.EqualValues(t, int64(1<<63-1), <-res)
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "bad", DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 1}},
		func(*rtapi.TaskContext) error { return nil })
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

// After MaxOverruns consecutive overruns the task ends with a
// *DeadlineError and its safe state runs once, on its thread; overruns
// that are not consecutive do not trip it.
func TestSimDeadlinePolicyOverruns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		overrun []int64 // cycles that take one period more
		trip    bool
	}{
		{"three in a row", []int64{5, 6, 7}, true},
		{"not in a row", []int64{5, 6, 8, 9, 11}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, c := openSim(t, nil)
			safe := 0
			var last int64
			task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "p", Period: time.Millisecond,
				DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 3},
				SafeState:      func() { safe++ }},
				func(cy *rtapi.Cycle) { last = cy.Number() })
			require.NoError(t, err)
			for _, n := range tc.overrun {
				require.NoError(t, c.InjectOverrun(task, n, 0))
			}
			require.NoError(t, task.Start())
			require.NoError(t, c.Advance(20*time.Millisecond))
			if !tc.trip {
				require.Zero(t, safe)
				task.Stop()
				require.NoError(t, task.Wait())
				require.Equal(t, 1, safe, "a stop runs the safe state")
				return
			}
			err = task.Wait()
			require.ErrorIs(t, err, rtapi.ErrFaulted)
			var de *rtapi.DeadlineError
			require.True(t, errors.As(err, &de), "%v", err)
			require.EqualValues(t, 3, de.Overruns)
			require.EqualValues(t, 7, de.Cycle)
			require.EqualValues(t, 7, last, "no cycle after the one that tripped")
			require.Equal(t, 1, safe)
			task.Stop()
			require.Equal(t, 1, safe, "exactly once")
		})
	}
}

// One wake-up later than MaxLate faults the task.
func TestSimDeadlinePolicyMaxLate(t *testing.T) {
	t.Parallel()
	rt, c := openSim(t, nil)
	safe := 0
	task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "p", Period: time.Millisecond,
		DeadlinePolicy: rtapi.DeadlinePolicy{MaxLate: 1500 * time.Microsecond},
		SafeState:      func() { safe++ }},
		func(cy *rtapi.Cycle) {})
	require.NoError(t, err)
	require.NoError(t, c.InjectStall(task, 3, 1)) // 1 ms late: within the bound
	require.NoError(t, c.InjectStall(task, 6, 2)) // 2 ms late
	require.NoError(t, task.Start())
	require.NoError(t, c.Advance(20*time.Millisecond))
	err = task.Wait()
	var de *rtapi.DeadlineError
	require.True(t, errors.As(err, &de), "%v", err)
	require.Equal(t, 2*time.Millisecond, de.Late)
	require.Zero(t, de.Overruns)
	require.Equal(t, 1, safe)
}

// The safe state runs exactly once when the body panics or calls
// runtime.Goexit, before Wait returns.
func TestSimSafeStateOnPanicAndGoexit(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"panic", "goexit"} {
		t.Run(how, func(t *testing.T) {
			rt, c := openSim(t, nil)
			safe := 0
			task, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "p", Period: time.Millisecond,
				SafeState: func() { safe++ }},
				func(cy *rtapi.Cycle) {
					if cy.Number() == 3 {
						if how == "panic" {
							panic("boom")
						}
						runtime.Goexit()
					}
				})
			require.NoError(t, err)
			require.NoError(t, task.Start())
			require.NoError(t, c.Advance(10*time.Millisecond))
			require.Error(t, task.Wait())
			require.Equal(t, 1, safe)
		})
	}
}
