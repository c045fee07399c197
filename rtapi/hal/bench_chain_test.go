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

// BenchmarkChain runs a thread's cycle on the sim flavor with 1 and with
// 50 functions, each reading and writing pins (500 pins in all for 50),
// next to the same work as plain Go calls in a loop: ns/op is per cycle.
// (chain-50 - chain-1) / 49 is a function's cost in a thread, sim's
// scheduling included once per cycle in both.
func BenchmarkChain(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("chain-%d", n), func(b *testing.B) {
			rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
			require.NoError(b, err)
			defer rt.Close()
			h, err := hal.New(rt, hal.Options{})
			require.NoError(b, err)
			defer h.Close()
			th, err := h.NewThread("base", 50*time.Microsecond)
			require.NoError(b, err)
			for i := range n {
				c, err := h.NewComponent(fmt.Sprintf("c%d", i))
				require.NoError(b, err)
				var in [5]hal.Float
				var out [5]hal.Float
				for j := range 5 {
					in[j] = c.Float(fmt.Sprintf("c%d.in%d", i, j), hal.In)
					out[j] = c.Float(fmt.Sprintf("c%d.out%d", i, j), hal.Out)
				}
				c.Export(fmt.Sprintf("c%d.f", i), func(time.Duration, int64) {
					for j := range 5 {
						out[j].Set(in[j].Get() + 1)
					}
				})
				require.NoError(b, c.Ready())
				require.NoError(b, h.AddFunct(fmt.Sprintf("c%d.f", i), "base", hal.Last))
			}
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
		})
	}
	b.Run("go-loop-50", func(b *testing.B) {
		var in, out [50][5]float64
		fs := make([]func(), 50)
		for i := range fs {
			fs[i] = func() {
				for j := range 5 {
					out[i][j] = in[i][j] + 1
				}
			}
		}
		for b.Loop() {
			for _, f := range fs {
				f()
			}
		}
	})
}
