package hal_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// A component's segment lives with the HAL's (replacing one a dead host
// left is createReplacingStale's, tested with the data segment), is
// refused while the host of an existing one lives, and goes at Close.
func TestComponentSegment(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	defer rt.Close()
	o := shm.Options{Dir: dir, Instance: rt.Instance()}

	old, err := shm.Create(o, 0x1234, 4096)
	require.NoError(t, err)
	require.NoError(t, old.Close())

	h, err := hal.New(rt, hal.Options{ShmDir: dir})
	require.NoError(t, err)
	c, err := h.NewComponent("comp")
	require.NoError(t, err)
	_, err = c.NewSegment(0x1234, 4096)
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "this process made the old one and lives")

	require.NoError(t, shm.Remove(o, 0x1234))
	seg, err := c.NewSegment(0x1234, 8192)
	require.NoError(t, err)
	assert.Equal(t, 8192, seg.Size())
	copy(seg.Bytes(), "hello")
	other, err := shm.Attach(o, 0x1234)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(other.Bytes()[:5]))
	require.NoError(t, other.Close())

	require.NoError(t, h.Close())
	_, err = os.Stat(o.Path(0x1234))
	assert.ErrorIs(t, err, os.ErrNotExist, "Close removed it")
	_, err = c.NewSegment(0x1235, 4096)
	assert.ErrorIs(t, err, rtapi.ErrClosed)
}
