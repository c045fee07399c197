package hal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// A function's counters reach Stats at each of its thread's
// publications (every PublishEvery/period cycles: 20 for 50 µs and the
// default 1 ms, the first cycle of a run included), when it is removed
// and when the thread stops; they stay the function's across runs and
// removals. Values, on virtual time.
func TestFunctStatsArePublishedPerPublication(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	h, clock := openSim(t)
	th, err := h.NewThread("base", 50*time.Microsecond)
	require.NoError(t, err)
	for _, name := range []string{"f0", "f1"} {
		_, err := h.Export(name, nop)
		require.NoError(t, err)
		require.NoError(t, h.AddFunct(name, "base", hal.Last))
	}
	calls := func(name string) int64 {
		t.Helper()
		f, ok := h.Funct(name)
		require.True(t, ok)
		return f.Stats().Calls
	}
	const every = int64(hal.DefaultPublishEvery / (50 * time.Microsecond))
	require.NoError(t, h.Start())
	for range 45 {
		require.NoError(t, clock.RunCycles(th.Task(), 1))
		beat := th.Beat()
		published := 1 + (beat-1)/every*every // at cycles 1, 21, 41, ...
		require.Equal(t, published, calls("f0"), "f0 at beat %d", beat)
		require.Equal(t, published, calls("f1"), "f1 at beat %d", beat)
	}
	v, err := h.GetP("f0.tmax-increased")
	require.NoError(t, err)
	assert.Equal(t, "FALSE", v, "no call takes virtual time")

	require.NoError(t, h.RemoveFunct("f1", "base"))
	assert.EqualValues(t, 45, calls("f1"), "exact once removed")
	require.NoError(t, clock.RunCycles(th.Task(), 3))
	require.NoError(t, h.Stop())
	s := th.Stats()
	assert.EqualValues(t, 48, s.Beat)
	require.Len(t, s.Functs, 1)
	assert.Equal(t, s.Beat, s.Functs[0].Calls, "exact once stopped")
	assert.EqualValues(t, 45, calls("f1"))

	// The counters go on in the next run, f1's where it left off.
	require.NoError(t, h.AddFunct("f1", "base", hal.First))
	require.NoError(t, h.Start())
	require.NoError(t, clock.RunCycles(th.Task(), 1))
	assert.EqualValues(t, 46, calls("f1"), "published at the run's first cycle")
	assert.EqualValues(t, 49, calls("f0"))
	require.NoError(t, h.Stop())
}

// A thread cycle allocates nothing: 5 functions over 50 pins, their
// counters published every cycle. Allocations of a RunCycles of 1001
// cycles less those of one of 1 cycle, as sim's Run allocates its own
// bookkeeping once a call.
// Never parallel: AllocsPerRun panics in a parallel test.
func TestSimCycleDoesNotAllocate(t *testing.T) {
	rt := openRT(t, rtapi.Options{Flavor: "sim"})
	h, err := hal.New(rt, hal.Options{PublishEvery: 50 * time.Microsecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	clock, err := sim.New(rt)
	require.NoError(t, err)
	th, err := h.NewThread("base", 50*time.Microsecond)
	require.NoError(t, err)
	addChain(t, h, "base", 5, 10)
	require.NoError(t, h.Start())
	require.NoError(t, clock.RunCycles(th.Task(), 10))
	run := func(n int64) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := clock.RunCycles(th.Task(), n); err != nil {
				t.Fatal(err)
			}
		})
	}
	one, many := run(1), run(1001)
	t.Logf("allocations of a RunCycles: %v for 1 cycle, %v for 1001", one, many)
	assert.Zero(t, (many-one)/1000, "allocations per thread cycle")
	require.NoError(t, h.Stop())
	f, ok := h.Funct("c4.f")
	require.True(t, ok)
	assert.Equal(t, th.Beat(), f.Stats().Calls)
}
