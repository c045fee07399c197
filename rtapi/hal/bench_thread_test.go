package hal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// addChain makes n components on h, each exporting one function added
// last to thread: with pins > 0, a function reading pins/2 In pins and
// writing pins/2 Out pins (pins*n in all); with pins == 0, an empty one.
func addChain(tb testing.TB, h *hal.HAL, thread string, n, pins int) {
	tb.Helper()
	comps, fns := chainFuncs(tb, h, n, pins)
	for i, c := range comps {
		c.Export(fmt.Sprintf("c%d.f", i), fns[i])
		require.NoError(tb, c.Ready())
		require.NoError(tb, h.AddFunct(fmt.Sprintf("c%d.f", i), thread, hal.Last))
	}
}

// chainFuncs makes addChain's n components c0... with their pins, not yet
// ready, and returns them with their functions, not exported.
func chainFuncs(tb testing.TB, h *hal.HAL, n, pins int) ([]*hal.Component, []hal.Func) {
	tb.Helper()
	comps := make([]*hal.Component, n)
	fns := make([]hal.Func, n)
	for i := range n {
		c, err := h.NewComponent(fmt.Sprintf("c%d", i))
		require.NoError(tb, err)
		in := make([]hal.Float, pins/2)
		out := make([]hal.Float, pins/2)
		for j := range in {
			in[j] = c.Float(fmt.Sprintf("c%d.in%d", i, j), hal.In)
			out[j] = c.Float(fmt.Sprintf("c%d.out%d", i, j), hal.Out)
		}
		fns[i] = func(time.Duration, int64) {}
		if pins > 0 {
			fns[i] = func(time.Duration, int64) {
				for j := range in {
					out[j].Set(in[j].Get() + 1)
				}
			}
		}
		comps[i] = c
	}
	return comps, fns
}

// benchSimCycle times a sim-flavor cycle of a 50 µs thread running
// addChain's n functions over pins pins each: ns/op is per cycle.
func benchSimCycle(b *testing.B, n, pins int) { benchSimCycleOpts(b, n, pins, hal.Options{}) }

// benchSimCycleOpts is benchSimCycle on a HAL made with o.
func benchSimCycleOpts(b *testing.B, n, pins int, o hal.Options) {
	b.ReportAllocs()
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(b, err)
	defer rt.Close()
	h, err := hal.New(rt, o)
	require.NoError(b, err)
	defer h.Close()
	th, err := h.NewThread("base", 50*time.Microsecond)
	require.NoError(b, err)
	addChain(b, h, "base", n, pins)
	require.NoError(b, h.Start())
	clock, err := sim.New(rt)
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		if err := clock.RunCycles(th.Task(), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, h.Stop())
}

// BenchmarkCallOverhead is a function's cost in a thread against a plain
// Go call: a sim-flavor cycle of 1 and of 51 empty functions (ns/op per
// cycle; (chain-51 - chain-1) / 50 is one call with its timing and
// counters), next to 50 empty calls through a slice of func values.
func BenchmarkCallOverhead(b *testing.B) {
	for _, n := range []int{1, 51} {
		b.Run(fmt.Sprintf("chain-%d", n), func(b *testing.B) { benchSimCycle(b, n, 0) })
	}
	b.Run("go-calls-50", func(b *testing.B) {
		fs := make([]func(time.Duration, int64), 50)
		for i := range fs {
			fs[i] = func(time.Duration, int64) {}
		}
		for b.Loop() {
			for _, f := range fs {
				f(50*time.Microsecond, 0)
			}
		}
	})
}

// BenchmarkBaseThread50us runs a real 50 µs base thread on the flavor
// rtapi picks (SCHED_FIFO where permitted) for b.N cycles, with one empty
// function and with a chain of 50 functions over 500 pins, side by side.
// It reports the thread's p99.9 and worst wake-up latency and execution
// time (the chain) from its task's histograms; ns/op is a cycle's wall
// time, the period itself. Run it on a quiet machine with
// -benchtime=200000x (10 s a side) and compare the two.
func BenchmarkBaseThread50us(b *testing.B) {
	for _, tc := range []struct {
		name    string
		n, pins int
	}{{"empty-1", 1, 0}, {"chain-50-pins-500", 50, 10}} {
		b.Run(tc.name, func(b *testing.B) {
			rt, err := rtapi.Open(rtapi.Options{})
			if err != nil {
				b.Skip("rtapi.Open: ", err)
			}
			defer rt.Close()
			h, err := hal.New(rt, hal.Options{})
			require.NoError(b, err)
			defer h.Close()
			th, err := h.NewThread("base", 50*time.Microsecond)
			require.NoError(b, err)
			addChain(b, h, "base", tc.n, tc.pins)
			b.ResetTimer()
			require.NoError(b, h.Start())
			for th.Beat() < int64(b.N) && th.Err() == nil {
				time.Sleep(time.Millisecond) // the benchmark's goroutine, not the thread
			}
			require.NoError(b, h.Stop())
			b.StopTimer()
			s := th.Task().Stats()
			b.ReportMetric(float64(s.Latency.Percentile(0.999).Nanoseconds()), "wake-p99.9-ns")
			b.ReportMetric(float64(s.Latency.Max.Nanoseconds()), "wake-max-ns")
			b.ReportMetric(float64(s.Exec.Percentile(0.999).Nanoseconds()), "exec-p99.9-ns")
			b.ReportMetric(float64(s.Exec.Max.Nanoseconds()), "exec-max-ns")
		})
	}
}
