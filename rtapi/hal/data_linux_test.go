//go:build linux

package hal_test

import (
	"errors"
	"fmt"
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
	rttest.ParallelUnlessRT(t)
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

// A read-only viewer reads pins and is refused setp and sets with
// ErrPermission, never a fault; HostGone turns true when the host closes
// and the segment's name is gone, and a new host on the key is reached by
// attaching again.
func TestDataReadOnlyAndHostGone(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h := newHAL(t, hal.Options{DataKey: 0x7f, StatsKey: 0x80, ShmDir: dir})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.in", hal.In)
	require.NoError(t, c.Ready())
	require.NoError(t, h.SetP("c.in", "2.5"))
	d, err := hal.AttachData(hal.MonitorOptions{Key: 0x7f, Dir: dir, ReadOnly: true})
	require.NoError(t, err)
	defer d.Close()
	m, err := hal.OpenMonitor(hal.MonitorOptions{Key: 0x80, Dir: dir})
	require.NoError(t, err)
	defer m.Close()
	s, err := d.Read()
	require.NoError(t, err)
	require.Len(t, s.Pins, 1)
	assert.Equal(t, "2.5", hal.FormatValue(hal.TypeFloat, s.Pins[0].Value))
	assert.ErrorIs(t, d.SetP("c.in", "1"), rtapi.ErrPermission)
	assert.ErrorIs(t, d.SetS("x", "1"), rtapi.ErrPermission)
	assert.False(t, d.HostGone())
	assert.False(t, m.HostGone())

	require.NoError(t, h.Close())
	assert.True(t, d.HostGone())
	assert.True(t, m.HostGone())
	h2 := newHAL(t, hal.Options{DataKey: 0x7f, StatsKey: 0x80, ShmDir: dir})
	assert.True(t, d.HostGone(), "the old attachment stays gone")
	d2, err := hal.AttachData(hal.MonitorOptions{Key: 0x7f, Dir: dir, ReadOnly: true})
	require.NoError(t, err)
	defer d2.Close()
	assert.False(t, d2.HostGone())
	require.NoError(t, h2.Close())
}

// An empty file at the data or the stats key (a host that died between
// creating and sizing it, or a stray touch) is replaced as a stale
// segment; a live host's data segment is refused, naming its pid. (Moved
// here from examples/halhost/pins with the pin table.)
func TestEmptyStaleFilesReplacedLiveRefused(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	for _, f := range []string{"gortapi-0-00000091", "gortapi-0-00000092"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	h := newHAL(t, hal.Options{DataKey: 0x91, StatsKey: 0x92, ShmDir: dir})
	_, err := hal.New(h.RT(), hal.Options{DataKey: 0x91, ShmDir: dir})
	require.ErrorIs(t, err, os.ErrExist)
	assert.Contains(t, err.Error(), fmt.Sprintf("belongs to running process %d", os.Getpid()))
	require.NoError(t, h.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
