package latency

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/gortapi/gortapi/internal/rttest"
)

// waitGoroutines waits for the goroutine count to come back to n; the
// runtime needs a moment to retire exited goroutines.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	rttest.WaitFor(t, fmt.Sprintf("at most %d goroutines", n), func() bool { return runtime.NumGoroutine() <= n })
}

func TestLoadsStartAndStop(t *testing.T) {
	before := runtime.NumGoroutine()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	l := StartLoads([]Load{{Kind: LoadAlloc, Rate: 100e6}, {Kind: LoadHRTimers, N: 10}, {Kind: LoadCPU, N: 1}})
	// 1 alloc + 10 hrtimers + 1 cpu goroutines, and this test's own
	if n := runtime.NumGoroutine(); n < 13 {
		t.Fatalf("%d goroutines, want at least 13", n)
	}
	// the alloc load tops up its first tick's share at once: 100 MB/s × 5 ms
	rttest.WaitFor(t, "the alloc load to allocate 500 kB", func() bool {
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc-m0.TotalAlloc >= 500e3
	})
	l.Stop()
	waitGoroutines(t, before)
	var nilLoads *Loads
	nilLoads.Stop()
}
