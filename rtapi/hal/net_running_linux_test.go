//go:build linux

package hal_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// Nets made and unmade while a 20 kHz thread writes a 64-bit pin and a
// second thread reads it: every value read is one that was written whole
// (its two halves agree), never a torn one, on 32-bit systems too, and
// the reader sees the link come and go.
func TestNetWhileThreadsRunNoTornValue(t *testing.T) {
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
