package latency

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// HRTimerPeriod is the sleep of each hrtimers load thread (a storm of
// hrtimers: 100 threads in clock_nanosleep with a 4 ms timeout, which
// makes a busy real-time body's execution time jitter).
const HRTimerPeriod = 4 * time.Millisecond

// allocChunk is the size of each allocation of the alloc load; allocTick is
// how often it tops up to its rate.
const (
	allocChunk = 4 << 10
	allocTick  = 5 * time.Millisecond
	// allocLiveMax caps the working set the alloc load keeps reachable, so
	// a large rate makes the GC run often rather than the heap grow.
	allocLiveMax = 64 << 20
)

// Loads are running load generators; Stop ends them.
type Loads struct {
	stop atomic.Bool
	wg   sync.WaitGroup
}

// StartLoads starts every load in list and returns at once. The loads are
// ordinary goroutines (hrtimers ones locked to their own OS threads, at
// SCHED_OTHER), never real-time: they are the disturbance, not the
// measurement.
func StartLoads(list []Load) *Loads {
	l := &Loads{}
	for _, ld := range list {
		switch ld.Kind {
		case LoadAlloc:
			l.wg.Add(1)
			go l.alloc(ld.Rate)
		case LoadHRTimers:
			base := (sys.Nanotime()/int64(HRTimerPeriod) + 1) * int64(HRTimerPeriod)
			for range ld.N {
				l.wg.Add(1)
				go l.hrtimer(base)
			}
		case LoadCPU:
			for range ld.N {
				l.wg.Add(1)
				go l.spin()
			}
		}
	}
	return l
}

// Stop ends the loads and waits for their goroutines. Safe on nil.
func (l *Loads) Stop() {
	if l == nil {
		return
	}
	l.stop.Store(true)
	l.wg.Wait()
}

// sink keeps the compiler from eliding allocations.
var sink atomic.Pointer[[]byte]

// alloc allocates rate bytes a second in 4 KiB chunks and keeps a rolling
// window of them reachable (at most allocLiveMax), so the collector has
// marking to do and runs every few megabytes of allocation.
func (l *Loads) alloc(rate int64) {
	defer l.wg.Done()
	live := make([][]byte, max(1, min(rate/4, allocLiveMax)/allocChunk))
	perTick := max(1, rate*int64(allocTick)/int64(time.Second)/allocChunk)
	tick := time.NewTicker(allocTick) // load pacing, not a real-time path
	defer tick.Stop()
	next := 0
	for !l.stop.Load() {
		for range perTick {
			b := make([]byte, allocChunk)
			b[0] = byte(next)
			live[next] = b
			next = (next + 1) % len(live)
		}
		sink.Store(&live[0])
		<-tick.C
	}
}

// hrtimer sleeps on a 4 ms grid shared by every hrtimers thread, so that
// their timers expire together.
func (l *Loads) hrtimer(base int64) {
	defer l.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for next := base; !l.stop.Load(); next += int64(HRTimerPeriod) {
		if err := sys.SleepUntil(next); err != nil {
			return
		}
	}
}

func (l *Loads) spin() {
	defer l.wg.Done()
	x := uint64(1)
	for !l.stop.Load() {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink.Store(x)
}

var spinSink atomic.Uint64
