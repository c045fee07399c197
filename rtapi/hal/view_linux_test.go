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
	d, err := hal.OpenView(hal.ViewOptions{DataKey: 0x7e, Dir: dir})
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

// One View of both segments reads pins and threads; HostGone turns true
// when the host closes and the segments' names are gone, and a new host
// on the keys is reached by opening again.
func TestViewReadsBothSegmentsAndHostGone(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	dir := t.TempDir()
	h := newHAL(t, hal.Options{DataKey: 0x7f, StatsKey: 0x80, ShmDir: dir})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.in", hal.In)
	require.NoError(t, c.Ready())
	require.NoError(t, h.SetP("c.in", "2.5"))
	_, err = h.NewThread("slow", time.Second)
	require.NoError(t, err)
	keys := hal.ViewOptions{DataKey: 0x7f, StatsKey: 0x80, Dir: dir}
	v, err := hal.OpenView(keys)
	require.NoError(t, err)
	defer v.Close()
	s, err := v.Read()
	require.NoError(t, err)
	require.NotEmpty(t, s.Pins)
	assert.Equal(t, "c.in", s.Pins[0].Name)
	assert.Equal(t, "2.5", hal.FormatValue(hal.TypeFloat, s.Pins[0].Value))
	assert.Equal(t, os.Getpid(), s.HostPID)
	require.Len(t, s.Threads, 1)
	assert.Equal(t, "slow", s.Threads[0].Name)
	assert.Equal(t, os.Getpid(), v.HostPID())
	assert.False(t, v.HostGone())

	require.NoError(t, h.Close())
	assert.True(t, v.HostGone())
	h2 := newHAL(t, hal.Options{DataKey: 0x7f, StatsKey: 0x80, ShmDir: dir})
	assert.True(t, v.HostGone(), "the old attachment stays gone")
	v2, err := hal.OpenView(keys)
	require.NoError(t, err)
	defer v2.Close()
	assert.False(t, v2.HostGone())
	require.NoError(t, h2.Close())
	_, err = hal.OpenView(hal.ViewOptions{Dir: dir})
	assert.ErrorIs(t, err, rtapi.ErrInvalid, "no key")
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
