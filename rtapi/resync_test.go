package rtapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// After Resync the next release is a period away, even when the release
// that Resync forgot had already fired its timer: on kernels before 6.13
// the POSIX timer's queued signal came back after the re-arm and released
// the task at once (issue 21's unconfirmed item). .ci/realkernel.sh runs
// this on Debian's 6.1 kernels.
func TestResyncForgetsAFiredRelease(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off})
	for _, wake := range wakeModes {
		if e := rttest.Emulator(); e != "" && wake == rtapi.WakePosixTimer {
			continue // see flavors' TestWakerInterrupt
		}
		const period = 20 * time.Millisecond
		var resynced, woke int64
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: period, Wake: wake},
			func(tc *rtapi.TaskContext) error {
				for tc.WaitPeriod() {
					if tc.Cycle() < 2 {
						continue
					}
					// Two releases pass while the body runs: the timer
					// has fired (and signalled) for them.
					for tc.Now() <= tc.Release()+2*int64(period) {
					}
					resynced = tc.Now()
					tc.Resync()
					if tc.WaitPeriod() {
						woke = tc.Now()
					}
					return nil
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		require.NoError(t, task.Wait())
		require.NotZero(t, woke, wake.String())
		require.GreaterOrEqual(t, woke, resynced+int64(period), "%v: released %v after Resync, before its period",
			wake, time.Duration(woke-resynced))
		require.NoError(t, task.Delete())
	}
}
