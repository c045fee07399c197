package hal_test

import (
	"fmt"
	"math"
	"sync/atomic"
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
		fs := atomicLoop50()
		for b.Loop() {
			for _, f := range fs {
				f()
			}
		}
	})
	// chain-50's functions called as go-atomic-loop-50 calls its own,
	// without a thread: the pins' cost without the call's accounting.
	b.Run("pins-loop-50", func(b *testing.B) {
		fs := readyPins(b, 50)
		for b.Loop() {
			for _, f := range fs {
				f(50*time.Microsecond, 0)
			}
		}
	})
	// Where a pin access's cost lies: the yardstick's work reached as a
	// pin reaches its word, through a handle's atomic.Pointer, with the
	// pointers and words packed (ptr-dense: 8 bytes each, in creation
	// order) or spread as in data layout 1 (ptr-spread: each pointer in its
	// own 96-byte heap object, each word in its own 64-byte entry).
	b.Run("go-atomic-ptr-dense-50", func(b *testing.B) { benchAtomicPtr(b, 1, 1) })
	b.Run("go-atomic-ptr-spread-50", func(b *testing.B) { benchAtomicPtr(b, 12, 8) })
}

// atomicLoop50 is go-atomic-loop-50's work: 50 functions, each doing
// what a chain-50 function does (5 reads, 5 writes) with sync/atomic
// loads and stores on plain Go variables.
//
// Not inlined: a closure made in an inlined function was compiled with
// no inlining of its own (its atomic loads and stores became calls,
// tripling the figure; go1.26).
//
//go:noinline
func atomicLoop50() []func() {
	var in, out [50][5]atomic.Uint64
	fs := make([]func(), 50)
	for i := range fs {
		fs[i] = func() {
			for j := range 5 {
				out[i][j].Store(math.Float64bits(math.Float64frombits(in[i][j].Load()) + 1))
			}
		}
	}
	return fs
}

// chainBlock is how many cycles BenchmarkChainRatio runs per RunCycles.
const chainBlock = 100

// BenchmarkChainRatio puts issue 41's goal on one line: a function of 10
// pin accesses in a thread's chain, its call and accounting included,
// against the same work done with sync/atomic on plain Go variables. Each
// op runs, one after the other, chainBlock cycles of a 50-function chain
// and of a 1-function chain (BenchmarkChain's, each block one RunCycles,
// so the thread runs its cycles back to back as a real thread does,
// without sim's hand-over between goroutines each cycle) and chainBlock
// rounds of pins-loop-50 and of go-atomic-loop-50. It reports fn-ns, a
// function's cost ((chain-50 - chain-1) / 49 per cycle), pins-ns, the
// same function called from a loop with no thread (pins-loop-50 / 50),
// atomic-ns, the yardstick's work per function (go-atomic-loop-50 / 50),
// and x-atomic, fn-ns / atomic-ns (goal: at most 2). fn-ns - pins-ns is
// a call's cost in the chain. ns/op is the four blocks together.
func BenchmarkChainRatio(b *testing.B) {
	chain := func(n int) func() {
		rt, h := simHAL(b)
		th, err := h.NewThread("base", 50*time.Microsecond)
		require.NoError(b, err)
		addChain(b, h, "base", n, 10)
		require.NoError(b, h.Start())
		b.Cleanup(func() { require.NoError(b, h.Stop()) })
		clock, err := sim.New(rt)
		require.NoError(b, err)
		task := th.Task()
		return func() {
			if err := clock.RunCycles(task, chainBlock); err != nil {
				b.Fatal(err)
			}
		}
	}
	run50, run1 := chain(50), chain(1)
	fs := atomicLoop50()
	pins := readyPins(b, 50)
	timed := func(sum *time.Duration, f func()) {
		t := time.Now()
		f()
		*sum += time.Since(t)
	}
	var t50, t1, tPins, tAtomic time.Duration
	for b.Loop() {
		timed(&t50, run50)
		timed(&t1, run1)
		timed(&tPins, func() {
			for range chainBlock {
				for _, f := range pins {
					f(50*time.Microsecond, 0)
				}
			}
		})
		timed(&tAtomic, func() {
			for range chainBlock {
				for _, f := range fs {
					f()
				}
			}
		})
	}
	cycles := float64(b.N) * chainBlock
	fn := float64(t50-t1) / cycles / 49
	atomicNs := float64(tAtomic) / cycles / 50
	b.ReportMetric(fn, "fn-ns")
	b.ReportMetric(float64(tPins)/cycles/50, "pins-ns")
	b.ReportMetric(atomicNs, "atomic-ns")
	b.ReportMetric(fn/atomicNs, "x-atomic")
}

// benchAtomicPtr is go-atomic-loop-50 through 500 atomic.Pointers: the
// pointer of access k at refs[k*refStride], its word at words[k*wordStride].
func benchAtomicPtr(b *testing.B, refStride, wordStride int) {
	const n = 500
	refs := make([]atomic.Pointer[uint64], n*refStride)
	words := make([]uint64, n*wordStride)
	var h [50][10]*atomic.Pointer[uint64]
	for k := range n {
		refs[k*refStride].Store(&words[k*wordStride])
		h[k/10][k%10] = &refs[k*refStride]
	}
	fs := make([]func(), 50)
	for i := range fs {
		fs[i] = func() {
			for j := 0; j < 10; j += 2 {
				v := math.Float64frombits(atomic.LoadUint64(h[i][j].Load()))
				atomic.StoreUint64(h[i][j+1].Load(), math.Float64bits(v+1))
			}
		}
	}
	for b.Loop() {
		for _, f := range fs {
			f()
		}
	}
}

// readyPins makes chainFuncs' n components of 10 pin accesses each, ready,
// in a HAL on the sim flavor that lives until b ends, and returns their
// functions to call without a thread.
func readyPins(b *testing.B, n int) []hal.Func {
	_, h := simHAL(b)
	comps, fs := chainFuncs(b, h, n, 10)
	for _, c := range comps {
		require.NoError(b, c.Ready())
	}
	return fs
}

// simHAL opens an RT on the sim flavor and a HAL on it, both closed when
// b ends.
func simHAL(b *testing.B) (*rtapi.RT, *hal.HAL) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim"})
	require.NoError(b, err)
	b.Cleanup(func() { rt.Close() })
	h, err := hal.New(rt, hal.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { h.Close() })
	return rt, h
}
