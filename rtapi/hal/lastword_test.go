package hal_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// drive is a chain of two functions: drv.fault, which faults when told
// to, then drv.drive, which enables the amplifier and sets its DAC every
// cycle. Its safe state drv.off drops the enable and zeroes the DAC.
// lateDrives counts drv.drive's calls that came after the safe state had
// run: the invariant "safe states are the last word" wants none.
type drive struct {
	enable     hal.Bit
	dac        hal.Float
	safe       atomic.Int64 // runs of drv.off
	drives     atomic.Int64 // calls of drv.drive
	lateDrives atomic.Int64 // calls of drv.drive after drv.off ran
}

func newDrive(t *testing.T, h *hal.HAL, thread string, fault func(fc *hal.FuncContext, d *drive)) *drive {
	t.Helper()
	c, err := h.NewComponent("drv")
	require.NoError(t, err)
	d := &drive{enable: c.Bit("drv.enable", hal.Out), dac: c.Float("drv.dac", hal.Out)}
	c.ExportContext("drv.fault", func(fc *hal.FuncContext) { fault(fc, d) })
	c.ExportContext("drv.drive", func(*hal.FuncContext) {
		if d.safe.Load() != 0 {
			d.lateDrives.Add(1)
		}
		d.drives.Add(1)
		d.enable.Set(true)
		d.dac.Set(5)
	})
	require.NoError(t, c.Ready())
	require.NoError(t, h.AddFunct("drv.fault", thread, hal.Last))
	require.NoError(t, h.AddFunct("drv.drive", thread, hal.Last))
	require.NoError(t, h.AddSafeState(thread, "drv.off", func() {
		d.enable.Set(false)
		d.dac.Set(0)
		d.safe.Add(1)
	}))
	return d
}

// assertSafe checks that the thread's safe states had the last word.
func (d *drive) assertSafe(t *testing.T, th *hal.Thread) {
	t.Helper()
	assert.False(t, d.enable.Get(), "amp-enable after the fault")
	assert.Zero(t, d.dac.Get(), "the DAC after the fault")
	assert.Positive(t, d.safe.Load(), "the safe state ran")
	assert.Zero(t, d.lateDrives.Load(), "drv.drive was called after the safe state")
	assert.EqualValues(t, 1, th.Stats().SafeStateRuns, "one run, one count")
}

// Each way a thread ends on the sim flavor leaves the safe states as the
// last writes, though a later function of the chain re-enables the
// amplifier every cycle: no function of the thread is called after the
// fault (HACKING.md, "Safe states are the last word").
func TestSafeStatesAreTheLastWord(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	for _, tc := range []struct {
		reason string
		state  string
		err    error
	}{
		{"stop", "stopped", nil},
		{"close", "stopped", nil},
		{"panic", "failed", nil},
		{"goexit", "failed", rtapi.ErrGoexit},
		{"overruns", "failed", rtapi.ErrFaulted},
		{"late", "failed", rtapi.ErrFaulted},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			h, clock := openSim(t)
			th, err := h.NewThreadSpec(hal.ThreadSpec{Name: "servo", Period: time.Millisecond, Priority: hal.RateMonotonic,
				DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 2, MaxLate: 3 * time.Millisecond}})
			require.NoError(t, err)
			d := newDrive(t, h, "servo", func(fc *hal.FuncContext, _ *drive) {
				if fc.Cycle() != 4 {
					return
				}
				switch tc.reason {
				case "panic":
					panic("drive fault")
				case "goexit":
					runtime.Goexit()
				}
			})
			require.NoError(t, h.Start())
			switch tc.reason {
			case "overruns":
				require.NoError(t, clock.InjectOverrun(th.Task(), 5, 0))
				require.NoError(t, clock.InjectOverrun(th.Task(), 6, 0))
			case "late":
				require.NoError(t, clock.InjectStall(th.Task(), 5, 4))
			}
			require.NoError(t, clock.Advance(20*time.Millisecond))
			switch tc.reason {
			case "stop", "close":
				require.True(t, d.enable.Get(), "driven while running")
				if tc.reason == "stop" {
					require.NoError(t, h.Stop())
				} else {
					require.NoError(t, h.Close())
				}
			default:
				<-th.Done()
				err := h.Stop()
				require.Error(t, err)
				if tc.err != nil {
					require.ErrorIs(t, err, tc.err)
				}
			}
			assert.Equal(t, tc.state, th.State())
			if tc.reason != "close" { // Close leaves handles unusable
				d.assertSafe(t, th)
			} else {
				assert.EqualValues(t, 1, d.safe.Load())
				assert.Zero(t, d.lateDrives.Load())
			}
		})
	}
}

// A function that never returns keeps Stop (and Close) from stopping its
// thread: Stop gives up after StopTimeout with ErrTimeout, and runs the
// thread's safe states at once, as the watchdog would. When the function
// returns at last, the rest of the chain is not called, and the safe
// states run again, so they are the last word even over the stuck
// function's own writes.
func TestSafeStatesWhenStopTimesOut(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	for _, how := range []string{"stop", "close"} {
		t.Run(how, func(t *testing.T) {
			// The RT's StopTimeout bounds Close's wait for the task too.
			h, err := hal.New(openRT(t, rtapi.Options{StopTimeout: 50 * time.Millisecond}), hal.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.Close() })
			th, err := h.NewThread("servo", time.Millisecond)
			require.NoError(t, err)
			var stuck atomic.Bool
			inside, release := make(chan struct{}), make(chan struct{})
			d := newDrive(t, h, "servo", func(_ *hal.FuncContext, d *drive) {
				if !stuck.Load() {
					return
				}
				close(inside)
				<-release
				d.enable.Set(true) // the stuck function's own last write
			})
			require.NoError(t, h.Start())
			waitBeat(t, th, 2)
			stuck.Store(true)
			<-inside
			require.True(t, d.enable.Get())
			if how == "stop" {
				err = h.Stop()
			} else {
				err = h.Close()
			}
			require.ErrorIs(t, err, rtapi.ErrTimeout)
			assert.EqualValues(t, 1, d.safe.Load(), "the safe states ran as Stop gave up")
			assert.False(t, d.enable.Get(), "amp-enable dropped while the function is stuck")
			close(release)
			<-th.Done()
			if how == "stop" {
				assert.False(t, d.enable.Get(), "amp-enable after the stuck function returned")
			}
			assert.EqualValues(t, 2, d.safe.Load(), "again once the stuck function returned")
			assert.Zero(t, d.lateDrives.Load(), "drv.drive was called after the safe state")
			assert.EqualValues(t, 1, th.Stats().SafeStateRuns)
		})
	}
}
