//go:build linux

package hal_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// When the watchdog demotes a runaway thread, its safe states run at
// once, off the runaway thread; when the runaway function returns, they
// run once more, on the thread, and the run counts once.
func TestSafeStateOnWatchdogFault(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	rttest.RequireRT(t)
	// The watchdog runs on real-time flavors only.
	h, err := hal.New(openRT(t, rtapi.Options{Flavor: "rt-preempt"}), hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var release atomic.Bool
	var threadTid, safeTid atomic.Int64
	a := newAmp(t, h, "servo", func(cycle int64) {
		threadTid.Store(int64(unix.Gettid()))
		if cycle == 3 {
			for !release.Load() { // runaway until the test lets it go
			}
		}
	})
	require.NoError(t, h.AddSafeState("servo", "note-tid", func() { safeTid.Store(int64(unix.Gettid())) }))
	require.NoError(t, h.Start())
	t.Cleanup(func() { release.Store(true) })
	task := th.Task()
	select {
	case <-task.Faulted():
	case <-time.After(30 * time.Second): // liveness only: the watchdog acts within 55 ms
		release.Store(true)
		t.Fatal("the watchdog did not fault the runaway thread")
	}
	require.ErrorIs(t, task.Wait(), rtapi.ErrFaulted, "Wait returns once the safe states have run")
	assert.EqualValues(t, 1, a.safe.Load())
	assert.False(t, a.enable.Get())
	assert.Zero(t, a.dac.Get())
	assert.NotEqual(t, threadTid.Load(), safeTid.Load(), "run off the runaway thread")
	release.Store(true)
	err = h.Stop()
	require.ErrorIs(t, err, rtapi.ErrFaulted)
	assert.EqualValues(t, 2, a.safe.Load(), "again, once the runaway returned")
	assert.EqualValues(t, 1, th.Stats().SafeStateRuns, "one run")
	assert.False(t, a.enable.Get())
	assert.Equal(t, "failed", th.State())
}
