package hal_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// A function that calls runtime.Goexit (t.FailNow, testify's require)
// ends its thread as a panic does: the thread is "failed", runs no chain,
// and RemoveFunct returns at once (issue 21, defect 11: the thread stayed
// "running" and RemoveFunct waited out StopTimeout, then ErrTimeout).
func TestGoexitInFunctionFailsOnlyItsThread(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{StopTimeout: rttest.WaitTimeout})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var arm atomic.Bool
	_, err = h.Export("quits", func(time.Duration, int64) {
		if arm.Load() {
			runtime.Goexit()
		}
	})
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("quits", "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 2)
	arm.Store(true)
	<-servo.Done()
	require.ErrorIs(t, servo.Err(), rtapi.ErrGoexit)
	require.Equal(t, "failed", servo.State())
	removed := make(chan error, 1)
	go func() { removed <- h.RemoveFunct("quits", "servo") }()
	select {
	case err := <-removed:
		require.NoError(t, err)
	case <-time.After(rttest.WaitTimeout / 2):
		t.Fatalf("RemoveFunct still waiting %v after the thread ended", rttest.WaitTimeout/2)
	}
}
