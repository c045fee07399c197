//go:build linux

package hal_test

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// When the watchdog faults a thread whose function runs away, the safe
// states run at once on the watchdog's goroutine. When the runaway
// returns, the rest of its chain (drv.drive, which would enable the
// amplifier again) is not called, and the safe states run once more on
// the thread, after the runaway's own last write: they are the last
// word, in this process and in another reading the data segment.
func TestSafeStatesAreTheLastWordAfterTheWatchdog(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	if rttest.ChildRole() == "read-amp" {
		readAmp()
		return
	}
	rttest.RequireRT(t)
	rttest.RequireSelfExec(t)
	dir := t.TempDir()
	// The watchdog runs on real-time flavors only.
	h, err := hal.New(openRT(t, rtapi.Options{Flavor: "rt-preempt"}), hal.Options{DataKey: 0x5afe, ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var release atomic.Bool
	t.Cleanup(func() { release.Store(true) })
	d := newDrive(t, h, "servo", func(fc *hal.FuncContext, d *drive) {
		if fc.Cycle() != 3 {
			return
		}
		for !release.Load() { // runaway until the test lets it go
		}
		d.enable.Set(true) // the runaway's own write, after the safe state
	})
	require.NoError(t, h.Start())
	task := th.Task()
	select {
	case <-task.Faulted():
	case <-time.After(30 * time.Second): // liveness only: the watchdog acts within 55 ms
		release.Store(true)
		t.Fatal("the watchdog did not fault the runaway thread")
	}
	require.ErrorIs(t, task.Wait(), rtapi.ErrFaulted, "Wait returns once the safe states have run")
	assert.EqualValues(t, 1, d.safe.Load())
	assert.False(t, d.enable.Get(), "dropped at once")
	drives := d.drives.Load()

	release.Store(true)
	<-task.Done()
	assert.Equal(t, "failed", th.State())
	assert.Equal(t, drives, d.drives.Load(), "drv.drive was called after the fault")
	assert.EqualValues(t, 2, d.safe.Load(), "again, after the runaway's last write")
	d.assertSafe(t, th)

	cmd := rttest.Child("read-amp", "-test.run=^TestSafeStateSeenByAnotherProcess$")
	cmd.Env = append(cmd.Env, "GORTAPI_TEST_SHMDIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "drv.enable=0 drv.dac=0", strings.TrimSpace(strings.Split(string(out), "\n")[0]),
		"safe values, seen from another process")
	require.ErrorIs(t, h.Stop(), rtapi.ErrFaulted)
	assert.EqualValues(t, 2, d.safe.Load(), "Stop runs them no more")
}
