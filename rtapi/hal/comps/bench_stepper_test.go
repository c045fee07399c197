package comps_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/stepperhal"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// stepperBaseHAL is a stepper machine's two threads on the sim flavor:
// a 25 µs base thread and a 1 ms servo thread running stepperhal.Base
// (3 stepgens, 3 encoders looped back from them and 1 pwmgen on base;
// their rates and counts on servo), the text latency-bench's stepper25
// group runs on the real flavor.
var stepperBaseHAL = emptyBaseHAL + stepperhal.Base

// emptyBaseHAL has the same threads and as many functions in each,
// every one empty: the cost of the threads' machinery alone.
const emptyBaseHAL = `loadrt threads name1=base period1=25000 name2=servo period2=1000000
`

// loadEmptyChain adds to emptyBaseHAL's threads as many empty functions
// as stepperBaseHAL's have (stepperhal.BaseFuncts, ServoFuncts).
func loadEmptyChain(t testing.TB, h *hal.HAL) {
	for _, th := range []struct {
		name string
		n    int
	}{{"base", stepperhal.BaseFuncts}, {"servo", stepperhal.ServoFuncts}} {
		thread := th.name
		for i := range th.n {
			name := fmt.Sprintf("empty.%s.%d", thread, i)
			_, err := h.Export(name, func(time.Duration, int64) {})
			require.NoError(t, err)
			require.NoError(t, h.AddFunct(name, thread, hal.Last))
		}
	}
}

// stepperRig loads src on a fresh sim-flavor HAL (and, for the empty
// chain, its functions), starts it and returns it with its clock and its
// base thread, ready to run base cycles.
func stepperRig(tb testing.TB, src string, empty bool) (*hal.HAL, *sim.Controller, *hal.Thread) {
	tb.Helper()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = h.Close() })
	cmds, err := halfile.Parse("stepper.hal", strings.NewReader(src))
	require.NoError(tb, err)
	require.NoError(tb, h.Load(io.Discard, cmds))
	if empty {
		loadEmptyChain(tb, h)
	}
	clock, err := sim.New(rt)
	require.NoError(tb, err)
	base, ok := h.Thread("base")
	require.True(tb, ok)
	require.NoError(tb, h.Start())
	return h, clock, base
}

// benchBaseCycles runs one base cycle per op on virtual time, ns/op the
// wall time of a cycle: the base thread's functions in their order, and
// once in 40 cycles the servo thread's, as a stepper machine's threads
// run them.
func benchBaseCycles(b *testing.B, src string, empty bool) {
	h, clock, base := stepperRig(b, src, empty)
	require.NoError(b, clock.RunCycles(base.Task(), 400)) // accelerate to maxvel
	b.ReportAllocs()
	b.ResetTimer()
	// All b.N cycles in one RunCycles, as the thread runs them back to
	// back: sim's per-call bookkeeping (4 allocations) is amortized.
	if err := clock.RunCycles(base.Task(), int64(b.N)); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	require.NoError(b, h.Stop())
}

// BenchmarkBaseThreadStepper times a base cycle of 3 stepgens, 3
// encoders and 1 pwmgen (stepperBaseHAL) on the sim flavor, servo
// thread included once in 40 cycles; it must not allocate.
func BenchmarkBaseThreadStepper(b *testing.B) { benchBaseCycles(b, stepperBaseHAL, false) }

// BenchmarkBaseThreadEmpty is BenchmarkBaseThreadStepper's chain with
// every function empty: Stepper / Empty is what the components add.
func BenchmarkBaseThreadEmpty(b *testing.B) { benchBaseCycles(b, emptyBaseHAL, true) }

// The benchmarks' chains step and count, and a base cycle of either
// allocates nothing.
func TestBaseThreadStepperAllocs(t *testing.T) {
	h, clock, base := stepperRig(t, stepperBaseHAL, false)
	require.NoError(t, clock.RunCycles(base.Task(), 4000)) // 0.1 s
	r := &rig{t, h, clock}
	assert.Greater(t, r.get("stepgen.2.counts"), 300.0, "stepgen steps")
	assert.InDelta(t, r.get("stepgen.2.counts")+1, r.get("encoder.2.counts"), 1, "the encoder counts")
	assert.Positive(t, r.get("pwmgen.0.curr-dc"), "pwmgen runs")
	assert.Zero(t, cycleAllocs(t, clock, base), "allocations per base cycle")
	_, eclock, ebase := stepperRig(t, emptyBaseHAL, true)
	assert.Zero(t, cycleAllocs(t, eclock, ebase), "allocations per empty base cycle")
}

// cycleAllocs returns the allocations of a base cycle: those of a
// RunCycles of 1001 cycles less those of one of 1 cycle, as sim's Run
// allocates its bookkeeping once a call (4 allocations today).
func cycleAllocs(t *testing.T, clock *sim.Controller, base *hal.Thread) float64 {
	run := func(n int64) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := clock.RunCycles(base.Task(), n); err != nil {
				t.Fatal(err)
			}
		})
	}
	one, many := run(1), run(1001)
	t.Logf("allocations of a RunCycles: %v for 1 cycle, %v for 1001", one, many)
	return (many - one) / 1000
}
