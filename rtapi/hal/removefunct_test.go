package hal_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// A RemoveFunct that times out leaves the function owned by its thread
// until its call has ended: it cannot be added to another thread
// meanwhile, where a second call would overlap the first (issue 36: it
// was freed at once, and AddFunct elsewhere succeeded). Once the call
// ends, it may be added again.
func TestRemoveFunctTimeoutKeepsTheFunctionOwned(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{StopTimeout: 20 * time.Millisecond})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	_, err = h.NewThread("slow", 2*time.Millisecond)
	require.NoError(t, err)
	var hold atomic.Bool
	var calls, overlaps atomic.Int64
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before Close, should the test fail
	_, err = h.Export("blocks", func(time.Duration, int64) {
		if calls.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer calls.Add(-1)
		if hold.CompareAndSwap(true, false) {
			close(inside)
			<-release
		}
	})
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("blocks", "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 2)
	hold.Store(true)
	<-inside

	err = h.RemoveFunct("blocks", "servo")
	require.ErrorIs(t, err, rtapi.ErrTimeout)
	assert.Contains(t, err.Error(), "call is still running")
	assert.Empty(t, servo.Functs(), "off the chain: the next cycle does not call it")
	err = h.AddFunct("blocks", "slow", hal.Last)
	require.ErrorIs(t, err, rtapi.ErrBusy, "its call on servo has not ended")
	assert.Contains(t, err.Error(), "being removed from thread \"servo\"")
	require.ErrorIs(t, h.AddFunct("blocks", "servo", hal.Last), rtapi.ErrBusy)

	free()
	rttest.WaitFor(t, "the held call to end", func() bool { return h.AddFunct("blocks", "slow", hal.Last) == nil })
	assert.Equal(t, []string{"blocks"}, h.Threads()[1].Functs())
	stopLoaded(t, h)
	assert.Zero(t, overlaps.Load(), "two calls of one function overlapped")
}

// A second RemoveFunct waits again for the call a first one timed out
// on, and then frees the function.
func TestRemoveFunctRetriesAfterTimeout(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{StopTimeout: 20 * time.Millisecond})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var hold atomic.Bool
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before Close, should the test fail
	_, err = h.Export("blocks", func(time.Duration, int64) {
		if hold.CompareAndSwap(true, false) {
			close(inside)
			<-release
		}
	})
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("blocks", "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 2)
	hold.Store(true)
	<-inside
	require.ErrorIs(t, h.RemoveFunct("blocks", "servo"), rtapi.ErrTimeout)
	require.ErrorIs(t, h.RemoveFunct("blocks", "servo"), rtapi.ErrTimeout, "still held")
	free()
	rttest.WaitFor(t, "the held call to end", func() bool { return h.RemoveFunct("blocks", "servo") == nil })
	require.ErrorIs(t, h.RemoveFunct("blocks", "servo"), rtapi.ErrInvalid, "now off the thread")
	stopLoaded(t, h)
}

// stopLoaded stops h, whose StopTimeout is these tests' 20 ms: on a
// loaded machine a thread may not get a CPU within it, so Stop may
// report ErrTimeout; every thread must then still end, without error.
func stopLoaded(t *testing.T, h *hal.HAL) {
	t.Helper()
	if err := h.Stop(); err != nil {
		require.ErrorIs(t, err, rtapi.ErrTimeout)
		for _, th := range h.Threads() {
			<-th.Done()
			require.NoError(t, th.Err(), "thread %s", th.Name())
		}
	}
}

// A RemoveFunct retried after the held call has already ended, and its
// thread has finished that cycle, frees the function (nil), as one
// retried while the call still runs does. Before, the retry found the
// function already let go and said "the function is not on this
// thread" (ErrInvalid) for ever: TestRemoveFunctRetriesAfterTimeout
// waited 30 s in CI when its retry came after the call had ended.
func TestRemoveFunctRetriedAfterTheCallEnded(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{StopTimeout: 20 * time.Millisecond})
	servo, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var hold atomic.Bool
	inside, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before Close, should the test fail
	_, err = h.Export("blocks", func(time.Duration, int64) {
		if hold.CompareAndSwap(true, false) {
			close(inside)
			<-release
			close(returned)
		}
	})
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("blocks", "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, servo, 2)
	hold.Store(true)
	<-inside
	beat := servo.Beat()
	require.ErrorIs(t, h.RemoveFunct("blocks", "servo"), rtapi.ErrTimeout)
	free()
	<-returned
	waitBeat(t, servo, beat+1) // the held cycle has finished
	require.NoError(t, h.RemoveFunct("blocks", "servo"))
	require.ErrorIs(t, h.RemoveFunct("blocks", "servo"), rtapi.ErrInvalid, "now off the thread")
	stopLoaded(t, h)
}
