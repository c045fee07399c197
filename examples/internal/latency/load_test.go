package latency

import (
	"runtime"
	"testing"
	"time"
)

// waitGoroutines waits for the goroutine count to come back to n; the
// runtime needs a moment to retire exited goroutines.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines left running, had %d before", runtime.NumGoroutine(), n)
}

func TestLoadsStartAndStop(t *testing.T) {
	before := runtime.NumGoroutine()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	l := StartLoads([]Load{{Kind: LoadAlloc, Rate: 100e6}, {Kind: LoadHRTimers, N: 10}, {Kind: LoadCPU, N: 1}})
	if got := len(l.List()); got != 3 {
		t.Fatalf("List has %d loads", got)
	}
	// 1 alloc + 10 hrtimers + 1 cpu goroutines, and this test's own
	if n := runtime.NumGoroutine(); n < 13 {
		t.Fatalf("%d goroutines, want at least 13", n)
	}
	time.Sleep(50 * time.Millisecond)
	l.Stop()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	// the alloc load tops up its first tick's share at once: 100 MB/s × 5 ms
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew < 500e3 {
		t.Fatalf("alloc load allocated only %d bytes", grew)
	}
	waitGoroutines(t, before)
	var nilLoads *Loads
	nilLoads.Stop()
	if nilLoads.List() != nil {
		t.Fatal("nil Loads lists loads")
	}
}
