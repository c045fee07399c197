//go:build linux

package hal_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// runAsChild runs the test named name again in a child process playing
// role, with dir as its GORTAPI_TEST_DIR, and checks that it passed: a
// host that dies of SIGBUS fails the parent instead of the test binary.
func runAsChild(t *testing.T, name, role string) {
	t.Helper()
	rttest.RequireSelfExec(t)
	cmd := rttest.Child(role, "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(cmd.Env, "GORTAPI_TEST_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the host: %s", out)
	assert.Contains(t, string(out), "--- PASS: "+name)
}

// truncate has another process shrink the segment file at path to size
// bytes.
func truncate(t *testing.T, path string, size int) {
	t.Helper()
	out, err := rttest.Child("truncate", path+":"+strconv.Itoa(size)).CombinedOutput()
	require.NoError(t, err, "child: %s", out)
}

// Another process truncates the data segment to nothing while two
// threads run functions that read and write pins every cycle: the host
// lives, both threads go on running their chains on the pins' now private
// words, the host's own reads and writes of pins work, HAL.DataErr
// reports the segment lost (shm.ErrTruncated), and Close reports it and
// still removes the segment. The host is a child process. Before, the
// first pin access after the truncation faulted and ended its thread as
// failed (a *PanicError), and HAL.Close died of SIGBUS.
func TestThreadSurvivesDataTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	const role = "truncated-data-host"
	if rttest.ChildRole() == role {
		truncatedDataHost(t, os.Getenv("GORTAPI_TEST_DIR"))
		return
	}
	runAsChild(t, "TestThreadSurvivesDataTruncation", role)
}

func truncatedDataHost(t *testing.T, dir string) {
	h := newHAL(t, hal.Options{DataKey: 0x94, ShmDir: dir})
	var calls [2]atomic.Int64
	threads := make([]*hal.Thread, 2)
	for i, n := range []string{"servo", "slow"} {
		c, err := h.NewComponent(n)
		require.NoError(t, err)
		in, out := c.S64(n+".in", hal.In), c.S64(n+".out", hal.Out)
		c.Export(n+".count", func(time.Duration, int64) {
			out.Set(in.Get() + 1)
			calls[i].Add(1)
		})
		c.S64Param(n+".gain", hal.RW)
		require.NoError(t, c.Ready())
		require.NoError(t, h.Net(n+"-loop", n+".out", n+".in"))
		th, err := h.NewThread(n, time.Duration(i+1)*time.Millisecond)
		require.NoError(t, err)
		threads[i] = th
		require.NoError(t, h.AddFunct(n+".count", n, hal.Last))
	}
	require.NoError(t, h.Start())
	waitBeat(t, threads[1], 3)
	require.NoError(t, h.DataErr())

	truncate(t, filepath.Join(dir, "gortapi-0-00000094"), 0)

	for i, th := range threads {
		n := calls[i].Load()
		rttest.WaitFor(t, th.Name()+" calls its chain after the truncation, or fails",
			func() bool { return calls[i].Load() >= n+20 || th.State() != "running" })
		require.Equal(t, "running", th.State(), "err: %v", th.Err())
	}
	err := h.DataErr()
	require.ErrorIs(t, err, shm.ErrTruncated)
	var te *shm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Zero(t, te.FileSize)

	// The pins work on: the loop counts up, and the host's own set-up
	// calls and its Data view read and write the private words.
	before, err := h.GetS("servo-loop")
	require.NoError(t, err)
	waitBeat(t, threads[0], threads[0].Beat()+3)
	after, err := h.GetS("servo-loop")
	require.NoError(t, err)
	b, _ := strconv.Atoi(before)
	a, _ := strconv.Atoi(after)
	assert.Greater(t, a, b, "the loop counts on")
	require.NoError(t, h.SetP("servo.gain", "7"))
	v, err := h.GetP("servo.gain")
	require.NoError(t, err)
	assert.Equal(t, "7", v)
	// The host's own view (Show, Save) reads tables it rewrote from what
	// it knows: names and links survive, only values were lost.
	s, err := h.View().Read()
	require.NoError(t, err)
	pins := componentPins(s.Pins)
	require.Len(t, pins, 4)
	assert.Equal(t, "servo-loop", pins[1].Signal)
	require.Len(t, s.Signals, 2)
	assert.Equal(t, "slow.out", s.Signals[1].Writer)
	var show strings.Builder
	require.NoError(t, h.Show(&show, "pin", ""))
	assert.Contains(t, show.String(), "slow.in")
	require.NoError(t, h.Save(&show))

	// The orphaned segment's cycles allocate nothing either.
	perCycle := testing.AllocsPerRun(50, func() {
		b := threads[0].Beat()
		for threads[0].Beat() == b {
			runtime.Gosched() // AllocsPerRun runs with GOMAXPROCS(1)
		}
	})
	assert.Zero(t, perCycle, "allocations per cycle after the loss")
	require.NoError(t, h.Stop())
	require.ErrorIs(t, h.Close(), shm.ErrTruncated)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the segment is removed all the same")
}

// A reader in another process (OpenView: halmon) whose host's
// data segment is truncated under it gets shm.ErrTruncated, a typed
// error, from Read, SetP and SetS, sees the host gone, and closes; the
// host's safe states, set-up calls and Close work on. The reader and the host
// are one child process, so that a fault in either fails this test, not
// the test binary. Before, HostGone said false, and the host died of
// SIGBUS in its first touch of the segment after the truncation.
func TestDataReaderSurvivesTruncation(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	const role = "truncated-data-reader"
	if rttest.ChildRole() == role {
		truncatedDataReader(t, os.Getenv("GORTAPI_TEST_DIR"))
		return
	}
	runAsChild(t, "TestDataReaderSurvivesTruncation", role)
}

func truncatedDataReader(t *testing.T, dir string) {
	h := newHAL(t, hal.Options{DataKey: 0x95, ShmDir: dir})
	c, err := h.NewComponent("c")
	require.NoError(t, err)
	c.Float("c.in", hal.In)
	c.Bit("c.enable", hal.Out)
	require.NoError(t, c.Ready())
	require.NoError(t, h.SetP("c.in", "2.5"))
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	_, err = h.Export("servo.idle", nop) // touches no pin
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("servo.idle", "servo", hal.Last))
	require.NoError(t, h.SafeP("servo", "c.enable", "1"))
	require.NoError(t, h.Start())
	waitBeat(t, th, 2)
	d, err := hal.OpenView(hal.ViewOptions{DataKey: 0x95, Dir: dir})
	require.NoError(t, err)
	s, err := d.Read()
	require.NoError(t, err)
	require.Len(t, componentPins(s.Pins), 2)
	assert.False(t, d.HostGone())

	truncate(t, filepath.Join(dir, "gortapi-0-00000095"), 0)

	_, err = d.Read()
	require.ErrorIs(t, err, shm.ErrTruncated)
	var te *shm.TruncatedError
	require.ErrorAs(t, err, &te)
	assert.Zero(t, te.FileSize)
	assert.True(t, d.HostGone(), "a truncated segment is a host gone")
	require.NoError(t, d.Close())

	// The host touches the segment first in the thread's safe state,
	// after its last cycle, then in its set-up calls.
	require.NoError(t, h.Stop())
	require.ErrorIs(t, h.DataErr(), shm.ErrTruncated)
	v, err := h.GetP("c.enable")
	require.NoError(t, err)
	assert.Equal(t, "TRUE", v, "the safe state ran")
	require.NoError(t, h.SetP("c.in", "3.5"))
	v, err = h.GetP("c.in")
	require.NoError(t, err)
	assert.Equal(t, "3.5", v)
	c2, err := h.NewComponent("c2")
	require.NoError(t, err)
	c2.Bit("c2.out", hal.Out)
	require.NoError(t, c2.Ready())
	require.NoError(t, h.Net("sig", "c2.out"))
	require.ErrorIs(t, h.DataErr(), shm.ErrTruncated)
	require.ErrorIs(t, h.Close(), shm.ErrTruncated)
}
