//go:build linux

package hal_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// Nets made and unmade while a 20 kHz thread writes a 64-bit pin and a
// second thread reads it: every value read is one that was written whole
// (its two halves agree), never a torn one, on 32-bit systems too, and
// the reader sees the link come and go.
func TestNetWhileThreadsRunNoTornValue(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	out := c.S64("c.out", hal.Out)
	in := c.S64("c.in", hal.In)
	var n int64
	c.Export("c.write", func(time.Duration, int64) {
		n++
		out.Set(n<<32 | n&0xffffffff)
	})
	var reads, torn, linked atomic.Int64
	c.Export("c.read", func(time.Duration, int64) {
		v := in.Get()
		reads.Add(1)
		if v>>32 != v&0xffffffff {
			torn.Add(1)
		}
		if v != 0 {
			linked.Add(1)
		}
	})
	require.NoError(t, c.Ready())
	base, err := h.NewThread("base", 50*time.Microsecond)
	require.NoError(t, err)
	servo, err := h.NewThread("servo", 100*time.Microsecond)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("c.write", "base", hal.Last))
	require.NoError(t, h.AddFunct("c.read", "servo", hal.Last))
	require.NoError(t, h.Start())
	waitBeat(t, base, 10)
	for range 100 {
		require.NoError(t, h.Net("x", "c.out", "c.in"))
		require.NoError(t, h.Unlink("c.in"))
		require.NoError(t, h.SetP("c.in", "0"))
	}
	require.NoError(t, h.Net("x", "c.out", "c.in"))
	before := linked.Load()
	waitBeat(t, servo, servo.Beat()+3)
	require.NoError(t, h.Stop())
	assert.Zero(t, torn.Load(), "of %d reads", reads.Load())
	assert.Greater(t, linked.Load(), before, "linked at the end, the reader follows the writer")
}

// A net that links two In pins while a function is between reading one
// and the other: the function sees both linked or neither, never one. The
// function reads c.a, then waits (a bounded spin) for the net to be made,
// or for a while when it is held back, and reads c.b. Before, net stored
// each pin's link at once while the cycle ran, and c.b read the signal
// while c.a had read its own word.
func TestNetIsAppliedBetweenCycles(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h := newHAL(t, hal.Options{})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	out := c.S64("c.out", hal.Out)
	a, b := c.S64("c.a", hal.In), c.S64("c.b", hal.In)
	var n int64
	var trap, netCalled atomic.Bool
	var cycles, half, trapped atomic.Int64
	c.Export("c.check", func(time.Duration, int64) {
		n++
		out.Set(n) // the signal's value this cycle, once linked
		va := a.Get()
		if trap.CompareAndSwap(true, false) {
			// Hold the cycle open while the net is made: until b changes,
			// or 200 ms (then the net was held back, as it must be).
			for stop := time.Now().Add(10 * time.Second); !netCalled.Load() && time.Now().Before(stop); {
				runtime.Gosched()
			}
			deadline := time.Now().Add(200 * time.Millisecond)
			for b.Get() != n && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			trapped.Add(1)
		}
		vb := b.Get()
		if (va == n) != (vb == n) {
			half.Add(1)
		}
		cycles.Add(1)
	})
	require.NoError(t, c.Ready())
	th, err := h.NewThread("servo", 100*time.Microsecond)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("c.check", "servo", hal.Last))
	require.NoError(t, h.SetP("c.a", "-1"))
	require.NoError(t, h.SetP("c.b", "-2"))
	require.NoError(t, h.Start())
	for range 3 {
		trap.Store(true)
		rttest.WaitFor(t, "the trap set", func() bool { return !trap.Load() })
		netCalled.Store(true)
		require.NoError(t, h.Net("x", "c.out", "c.a", "c.b"))
		netCalled.Store(false)
		before := cycles.Load()
		rttest.WaitFor(t, "a cycle after the net", func() bool { return cycles.Load() > before+1 })
		require.NoError(t, h.DeleteSignal("x"))
		require.NoError(t, h.SetP("c.a", "-1"))
		require.NoError(t, h.SetP("c.b", "-2"))
	}
	waitBeat(t, th, th.Beat()+2)
	require.NoError(t, h.Stop())
	assert.Equal(t, int64(3), trapped.Load())
	assert.Zero(t, half.Load(), "cycles that saw the net half made, of %d", cycles.Load())
}
