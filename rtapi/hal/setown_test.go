package hal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// SetOwn writes what an unlinked pin reads (LinuxCNC's dummysig) and
// leaves a linked signal alone; on a parameter it is Set.
func TestFloatSetOwn(t *testing.T) {
	h, _ := openSim(t)
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	in := c.Float("c.in", hal.In)
	gain := c.FloatParam("c.gain", hal.RW)
	d, err := h.NewComponent("d")
	require.NoError(t, err)
	out := d.Float("d.out", hal.Out)
	require.NoError(t, c.Ready())
	require.NoError(t, d.Ready())

	in.SetOwn(2.5)
	assert.Equal(t, 2.5, in.Get(), "unlinked: the pin reads its own word")

	require.NoError(t, h.Net("s", "d.out", "c.in"))
	out.Set(7)
	in.SetOwn(3.5)
	assert.Equal(t, 7.0, in.Get(), "linked: the pin reads the signal")
	v, err := h.GetS("s")
	require.NoError(t, err)
	assert.Equal(t, "7", v, "SetOwn left the signal alone")

	gain.SetOwn(4)
	assert.Equal(t, 4.0, gain.Get())

	assert.Zero(t, testing.AllocsPerRun(100, func() { in.SetOwn(1) }))
}
