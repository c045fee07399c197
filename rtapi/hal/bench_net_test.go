package hal_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// BenchmarkNetAt20kHz measures what a net change costs a running 20 kHz
// thread: each op links c.in to c.out's signal and unlinks it again while
// a 50 µs thread writes a 64-bit value whose halves must agree and reads
// it back. It reports the thread's overruns (missed releases) per 1000
// changes, next to the overruns of an equally long stretch without
// changes, and the torn reads (which must be 0). Run it as root on an
// idle machine (docs/BENCHMARKS.md).
func BenchmarkNetAt20kHz(b *testing.B) {
	rt, err := rtapi.Open(rtapi.Options{})
	if err != nil {
		b.Skip("rtapi.Open: ", err)
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	require.NoError(b, err)
	defer h.Close()
	c, err := h.NewComponent("c")
	require.NoError(b, err)
	out := c.S64("c.out", hal.Out)
	in := c.S64("c.in", hal.In)
	var n int64
	var torn atomic.Int64
	c.Export("c.f", func(time.Duration, int64) {
		n++
		out.Set(n<<32 | n&0xffffffff)
		if v := in.Get(); v>>32 != v&0xffffffff {
			torn.Add(1)
		}
	})
	require.NoError(b, c.Ready())
	th, err := h.NewThread("base", 50*time.Microsecond)
	require.NoError(b, err)
	require.NoError(b, h.AddFunct("c.f", "base", hal.Last))
	require.NoError(b, h.Start())
	defer h.Stop()
	for th.Stats().Beat < 1000 {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	start, before := time.Now(), th.Stats().Overruns
	for b.Loop() {
		if err := h.Net("x", "c.out", "c.in"); err != nil {
			b.Fatal(err)
		}
		if err := h.Unlink("c.in"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	during, took := th.Stats().Overruns-before, time.Since(start)
	before = th.Stats().Overruns
	time.Sleep(took)
	quiet := th.Stats().Overruns - before
	b.ReportMetric(float64(during)*1000/float64(b.N), "overruns/1000-changes")
	b.ReportMetric(float64(quiet)*1000/float64(b.N), "overruns-same-time-no-changes/1000")
	b.ReportMetric(float64(torn.Load()), "torn")
}
