//go:build linux

package hal_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// A second process scribbles over a running host's data segment while the
// host's functions read and write pins and a reader shows them: the host
// keeps running (its pins only get wrong values) and every read gives
// data or ErrCorrupt.
func TestDataUnderHostileWriter(t *testing.T) {
	dir := t.TempDir()
	h := newHAL(t, hal.Options{DataKey: 0x7e, ShmDir: dir})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	in, out := c.Float("c.in", hal.In), c.Float("c.out", hal.Out)
	c.Export("c.update", func(time.Duration, int64) { out.Set(in.Get() + 1) })
	require.NoError(t, c.Ready())
	require.NoError(t, h.Net("loop", "c.out", "c.in"))
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("c.update", "servo", hal.Last))
	require.NoError(t, h.Start())
	d, err := hal.AttachData(hal.MonitorOptions{Key: 0x7e, Dir: dir})
	require.NoError(t, err)
	defer d.Close()

	cmd := rttest.Child("scribble-data", filepath.Join(dir, "gortapi-0-0000007e")+":3000000")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var reads, corrupt int
	for finished := false; !finished; {
		select {
		case err := <-done:
			require.NoError(t, err)
			finished = true
		default:
		}
		_, err := d.Read()
		reads++
		if err != nil {
			if !errors.Is(err, rtapi.ErrBusy) {
				require.ErrorIs(t, err, hal.ErrCorrupt)
			}
			corrupt++
		}
	}
	t.Logf("%d reads while the writer ran, %d refused", reads, corrupt)
	assert.NotZero(t, corrupt, "the writer did corrupt the segment")
	beat := th.Beat()
	waitBeat(t, th, beat+2)
	require.NoError(t, h.Stop(), "the host's thread kept running")
}
