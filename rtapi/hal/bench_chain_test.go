package hal_test

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// BenchmarkChain runs a thread's cycle on the sim flavor with 1 and with
// 50 functions, each reading and writing pins (500 pins in all for 50),
// next to the same work as plain Go calls in a loop: ns/op is per cycle.
// (chain-50 - chain-1) / 49 is a function's cost in a thread, sim's
// scheduling included once per cycle in both. The 50 µs thread publishes
// its functions' counters every 20 cycles (the default PublishEvery, 1
// ms); the -publish-each variants publish them every cycle, as a thread
// of 1 ms or more does.
func BenchmarkChain(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("chain-%d", n), func(b *testing.B) { benchSimCycle(b, n, 10) })
	}
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("chain-%d-publish-each", n), func(b *testing.B) {
			benchSimCycleOpts(b, n, 10, hal.Options{PublishEvery: 50 * time.Microsecond})
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
	// The same work with sync/atomic loads and stores on plain Go
	// variables: issue 41's yardstick for a function's pin accesses.
	b.Run("go-atomic-loop-50", func(b *testing.B) {
		var in, out [50][5]atomic.Uint64
		fs := make([]func(), 50)
		for i := range fs {
			fs[i] = func() {
				for j := range 5 {
					out[i][j].Store(math.Float64bits(math.Float64frombits(in[i][j].Load()) + 1))
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
