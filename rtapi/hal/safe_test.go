package hal_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// amp is a drive's enable and DAC output, driven each cycle, with a safe
// state that drops the enable and zeroes the DAC.
type amp struct {
	enable hal.Bit
	dac    hal.Float
	safe   atomic.Int64
}

func newAmp(t *testing.T, h *hal.HAL, thread string, fault func(cycle int64)) *amp {
	t.Helper()
	c, err := h.NewComponent("amp")
	require.NoError(t, err)
	a := &amp{enable: c.Bit("amp.enable", hal.Out), dac: c.Float("amp.dac", hal.Out)}
	c.ExportContext("amp.write", func(fc *hal.FuncContext) {
		a.enable.Set(true)
		a.dac.Set(5)
		if fault != nil {
			fault(fc.Cycle())
		}
	})
	require.NoError(t, c.Ready())
	require.NoError(t, h.AddFunct("amp.write", thread, hal.Last))
	require.NoError(t, h.AddSafeState(thread, "amp.off", func() {
		a.enable.Set(false)
		a.dac.Set(0)
		a.safe.Add(1)
	}))
	return a
}

// Each way a thread's run ends runs its safe states exactly once, and
// leaves the pins at their safe values.
func TestSimSafeStateTriggers(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	for _, tc := range []struct {
		trigger string
		state   string
		err     error
	}{
		{"stop", "stopped", nil},
		{"panic", "failed", nil},
		{"goexit", "failed", rtapi.ErrGoexit},
		{"overruns", "failed", rtapi.ErrFaulted},
		{"late", "failed", rtapi.ErrFaulted},
	} {
		t.Run(tc.trigger, func(t *testing.T) {
			h, clock := openSim(t)
			th, err := h.NewThreadSpec(hal.ThreadSpec{Name: "servo", Period: time.Millisecond, Priority: hal.RateMonotonic,
				DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 2, MaxLate: 3 * time.Millisecond}})
			require.NoError(t, err)
			a := newAmp(t, h, "servo", func(cycle int64) {
				if cycle != 4 {
					return
				}
				switch tc.trigger {
				case "panic":
					panic("amp fault")
				case "goexit":
					runtime.Goexit()
				}
			})
			require.Equal(t, []string{"amp.off"}, th.SafeStates())
			require.NoError(t, h.Start())
			switch tc.trigger {
			case "overruns":
				require.NoError(t, clock.InjectOverrun(th.Task(), 5, 0))
				require.NoError(t, clock.InjectOverrun(th.Task(), 6, 0))
			case "late":
				require.NoError(t, clock.InjectStall(th.Task(), 5, 4))
			}
			require.NoError(t, clock.Advance(20*time.Millisecond))
			if tc.trigger == "stop" {
				assert.True(t, a.enable.Get(), "driven while running")
				assert.Zero(t, a.safe.Load())
				require.NoError(t, h.Stop())
			} else {
				<-th.Done()
				err := h.Stop()
				require.Error(t, err)
				if tc.err != nil {
					require.ErrorIs(t, err, tc.err)
				}
				if tc.trigger == "panic" {
					var pe *hal.PanicError
					require.True(t, errors.As(err, &pe), "%v", err)
				}
			}
			assert.Equal(t, tc.state, th.State())
			assert.False(t, a.enable.Get())
			assert.Zero(t, a.dac.Get())
			assert.EqualValues(t, 1, a.safe.Load(), "exactly once")
			assert.EqualValues(t, 1, th.Stats().SafeStateRuns)
			require.NoError(t, h.Stop())
			assert.EqualValues(t, 1, a.safe.Load(), "still once")
		})
	}
}

// A safe state that panics is logged; the next one still runs.
func TestSimSafeStatePanicDoesNotStopTheNext(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, clock := openSim(t)
	_, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var ran []string
	require.NoError(t, h.AddSafeState("servo", "first", func() { panic("broken safe state") }))
	require.NoError(t, h.AddSafeState("servo", "second", func() { ran = append(ran, "second") }))
	require.ErrorIs(t, h.AddSafeState("nope", "x", func() {}), rtapi.ErrInvalid)
	require.ErrorIs(t, h.AddSafeState("servo", "bad name", func() {}), rtapi.ErrInvalid)
	require.NoError(t, h.Start())
	require.NoError(t, clock.Advance(2*time.Millisecond))
	require.NoError(t, h.Stop())
	require.Equal(t, []string{"second"}, ran)
}

// The pins a safe state writes are in the data segment: a second process
// reading it sees the safe values once the deadline policy has faulted the
// thread.
func TestSafeStateSeenByAnotherProcess(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	if rttest.ChildRole() == "read-amp" {
		readAmp()
		return
	}
	rttest.RequireSelfExec(t)
	dir := t.TempDir()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	h, err := hal.New(rt, hal.Options{DataKey: 0x5afe, ShmDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, err := h.NewThreadSpec(hal.ThreadSpec{Name: "servo", Period: time.Millisecond, Priority: hal.RateMonotonic,
		DeadlinePolicy: rtapi.DeadlinePolicy{MaxOverruns: 3}})
	require.NoError(t, err)
	newAmp(t, h, "servo", nil)
	require.NoError(t, h.Start())
	read := func() string {
		cmd := rttest.Child("read-amp", "-test.run=^TestSafeStateSeenByAnotherProcess$")
		cmd.Env = append(cmd.Env, "GORTAPI_TEST_SHMDIR="+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		require.NoError(t, err)
		return strings.TrimSpace(strings.Split(string(out), "\n")[0])
	}
	require.NoError(t, clock.Advance(5*time.Millisecond))
	require.Equal(t, "amp.enable=1 amp.dac=5", read(), "driven while running")
	for n := int64(6); n < 9; n++ {
		require.NoError(t, clock.InjectOverrun(th.Task(), n, 0))
	}
	require.NoError(t, clock.Advance(10*time.Millisecond))
	<-th.Done()
	require.Equal(t, "failed", th.State())
	require.Equal(t, "amp.enable=0 amp.dac=0", read(), "safe values, seen from another process")
}

// readAmp is the second process of TestSafeStateSeenByAnotherProcess: it
// prints the amp's pins as the data segment holds them.
func readAmp() {
	d, err := hal.OpenView(hal.ViewOptions{DataKey: 0x5afe, Dir: os.Getenv("GORTAPI_TEST_SHMDIR")})
	if err != nil {
		fmt.Println("attach:", err)
		return
	}
	defer d.Close()
	s, err := d.Read()
	if err != nil {
		fmt.Println("read:", err)
		return
	}
	var out []string
	for _, p := range s.Pins {
		switch p.Type {
		case hal.TypeBit:
			out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Value))
		case hal.TypeFloat:
			out = append(out, fmt.Sprintf("%s=%g", p.Name, math.Float64frombits(p.Value)))
		}
	}
	fmt.Println(strings.Join(out, " "))
}
