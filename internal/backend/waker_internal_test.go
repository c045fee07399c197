//go:build linux

package backend

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
)

// A wake-up of a nanosleep wait whose request was withdrawn before the
// sleeper looked (Pause then Resume, both during the sleep) does not end
// the wait before its deadline (issue 21, defect 1: the raw sleep of the
// time returned a release up to a period early). A goroutine wakes the
// word without pause while the sleeps last.
func TestWakerWithdrawnWakeKeepsDeadline(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var ctl atomic.Uint32
		w, err := newWaker(WakeNanosleep, DefaultTimerSignal, &ctl)
		require.NoError(t, err)
		defer w.Close()
		var stop atomic.Bool
		var wakes atomic.Int64
		go func() {
			for !stop.Load() {
				sys.WakeSleeper(&ctl) // Pause's wake-up, its request withdrawn by Resume
				wakes.Add(1)
			}
		}()
		defer stop.Store(true)
		for range 20 {
			deadline := w.Now() + int64(1500*time.Microsecond)
			now, releases, err := w.Wait(deadline)
			require.NoError(t, err)
			require.EqualValues(t, 1, releases)
			require.GreaterOrEqual(t, now, deadline, "released %v early", time.Duration(deadline-now))
		}
		require.NotZero(t, wakes.Load())
	}()
	<-done
}
