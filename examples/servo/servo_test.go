package main

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hist"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// simRun runs the default moves in a 1 ms HAL servo thread on the sim
// flavor, with the given wake-up jitter, and returns the servo once every
// move is made.
func simRun(t *testing.T, jitter sim.Jitter) (*Servo, hal.ThreadStats, rtapi.Stats) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 6}})
	require.NoError(t, err)
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	defer h.Close()
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	s := NewServo(DefaultConfig())
	require.NoError(t, s.Install(h, "servo"))
	require.NoError(t, h.Start())
	clock, err := sim.New(rt)
	require.NoError(t, err)
	require.NoError(t, clock.SetTask(th.Task(), sim.TaskConfig{Jitter: jitter}))
	require.NoError(t, clock.RunUntil(s.Done, 2*s.cfg.Duration()))
	require.NoError(t, h.Stop())
	return s, th.Stats(), th.Task().Stats()
}

func TestFollowingErrorOnSim(t *testing.T) {
	s, ts, ks := simRun(t, sim.Jitter{})
	f := s.Following
	t.Logf("max %.3f mrad at %.3f s, rms %.3f mrad, final %.4f mrad, %d cycles", f.Max*1e3, f.AtMax, f.RMS()*1e3, f.Final*1e3, f.N)
	// The plan is 1.46 s of moves and dwells at 1 kHz.
	assert.InDelta(t, 1460, f.N, 2)
	assert.Less(t, f.Max, 3e-3, "following error stays within 3 mrad")
	assert.Less(t, f.RMS(), 1e-3)
	assert.Less(t, abs(f.Final), 1e-4, "the axis settles on its target")
	assert.Equal(t, ts.Beat, ts.Functs[2].Calls, "pid ran every cycle")
	assert.Zero(t, ts.Overruns)
	assert.Zero(t, ks.Overruns)
	assert.Zero(t, ks.Latency.Max, "no jitter injected")
}

func TestFollowingErrorIsDeterministicOnSim(t *testing.T) {
	a, _, _ := simRun(t, sim.UniformJitter(0, 200*time.Microsecond))
	b, _, _ := simRun(t, sim.UniformJitter(0, 200*time.Microsecond))
	assert.Equal(t, a.Following, b.Following, "same seed, same jitter: the same run")
}

func TestFollowingErrorWithRecordedJitter(t *testing.T) {
	data, err := os.ReadFile("testdata/latency-vm-fifo-1ms.json")
	require.NoError(t, err)
	var h hist.Snapshot
	require.NoError(t, json.Unmarshal(data, &h))
	require.Positive(t, h.Count)

	s, _, ks := simRun(t, sim.HistogramJitter(h))
	f := s.Following
	t.Logf("recorded jitter (p99 %v, max %v): max %.3f mrad, rms %.3f mrad, final %.4f mrad; replayed p99 %v max %v",
		mustQuantile(t, h, 0.99), time.Duration(h.Max), f.Max*1e3, f.RMS()*1e3, f.Final*1e3,
		mustQuantile(t, ks.Latency, 0.99), time.Duration(ks.Latency.Max))
	assert.Positive(t, ks.Latency.Max, "the jitter was injected")
	assert.LessOrEqual(t, ks.Latency.Max, h.Max+time.Microsecond, "replayed within the recorded range")
	assert.Less(t, f.Max, 50e-3, "this VM's jitter keeps the following error within 50 mrad")
	assert.Less(t, abs(f.Final), 5e-3, "and the axis still ends near its target")

	clean, _, _ := simRun(t, sim.Jitter{})
	assert.Greater(t, f.Max, clean.Following.Max, "jitter costs following error")
}

func TestHeavyJitterExceedsTheBound(t *testing.T) {
	// The bound means something: a machine waking up to 0.9 ms late
	// breaks it.
	s, _, _ := simRun(t, sim.UniformJitter(0, 900*time.Microsecond))
	assert.Greater(t, s.Following.Max, 50e-3)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// mustQuantile is s.Quantile(q) for a q the test knows is in (0, 1].
func mustQuantile(t *testing.T, s hist.Snapshot, q float64) time.Duration {
	t.Helper()
	d, err := s.Quantile(q)
	require.NoError(t, err)
	return d
}
