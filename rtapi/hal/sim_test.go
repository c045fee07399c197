package hal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

func openSim(t *testing.T) (*hal.HAL, *sim.Controller) {
	t.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	return h, clock
}

func TestSimScheduleIsDeterministic(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, clock := openSim(t)
	_, err := h.NewThread("base", 250*time.Microsecond)
	require.NoError(t, err)
	_, err = h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var log []string
	for _, f := range []struct{ name, thread string }{
		{"stepgen.0.make-pulses", "base"}, {"encoder.0.update-counters", "base"},
		{"motion.0.controller", "servo"}, {"pid.0.do-pid-calcs", "servo"},
	} {
		_, err := h.Export(f.name, func(p time.Duration, now int64) {
			log = append(log, fmt.Sprintf("%v %s", time.Duration(now), f.name))
		})
		require.NoError(t, err)
		require.NoError(t, h.AddFunct(f.name, f.thread, hal.Last))
	}
	require.NoError(t, h.Start())
	assert.Equal(t, "running", h.Threads()[1].State(), "running before the simulation first runs it")
	require.NoError(t, clock.Advance(time.Millisecond))
	assert.Equal(t, []string{
		"0s stepgen.0.make-pulses", "0s encoder.0.update-counters", // base first: higher priority
		"0s motion.0.controller", "0s pid.0.do-pid-calcs",
		"250µs stepgen.0.make-pulses", "250µs encoder.0.update-counters",
		"500µs stepgen.0.make-pulses", "500µs encoder.0.update-counters",
		"750µs stepgen.0.make-pulses", "750µs encoder.0.update-counters",
		"1ms stepgen.0.make-pulses", "1ms encoder.0.update-counters",
		"1ms motion.0.controller", "1ms pid.0.do-pid-calcs",
	}, log)
	require.NoError(t, h.Stop())
}

func TestSimOverrunShowsInTaskStats(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, clock := openSim(t)
	th, err := h.NewThread("servo", time.Millisecond)
	require.NoError(t, err)
	var seen []time.Duration
	_, err = h.Export("f", func(p time.Duration, now int64) { seen = append(seen, time.Duration(now)) })
	require.NoError(t, err)
	require.NoError(t, h.AddFunct("f", "servo", hal.Last))
	require.NoError(t, h.Start())
	require.NoError(t, clock.SetTask(th.Task(), sim.TaskConfig{Cost: 300 * time.Microsecond}))
	require.NoError(t, clock.InjectOverrun(th.Task(), 3, 0))
	require.NoError(t, clock.RunCycles(th.Task(), 6))
	require.NoError(t, h.Stop())

	ms := time.Millisecond
	assert.Equal(t, []time.Duration{0, ms, 2 * ms, 3 * ms, 4*ms + 300*time.Microsecond, 5 * ms}, seen,
		"cycle 3 ran a period over its cost: cycle 4 started late, cycle 5 was back on the grid")
	s := th.Stats()
	assert.Equal(t, int64(6), s.Beat)
	// The sim charges a task's cost after its body, so the chain itself
	// takes no virtual time: function times read 0 and the overrun shows
	// in the task's statistics.
	assert.Zero(t, s.TMax)
	assert.Zero(t, s.Overruns)
	assert.Equal(t, int64(1), th.Task().Stats().Overruns)
}
