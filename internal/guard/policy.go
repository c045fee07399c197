package guard

import (
	"sync/atomic"
	"time"
)

// Slot is one watched task's part of the page it shares with the guard:
// the task stores its completed cycles and whether it is idle on purpose
// (paused); the guard only reads them.
type Slot struct {
	Cycles atomic.Int64
	Idle   atomic.Int64 // non-zero while the task is paused
}

// PageSize is the size of the shared page: 1024 slots, maxWatched.
const PageSize = 16 << 10

// TickEvery is how often the guard sends Event.Tick, the clock of its
// owner's slower steps (runtime threads at SCHED_FIFO 1 and their valve).
const TickEvery = 100 * time.Millisecond

// Runaway reports whether a thread without progress for stalled ns is a
// runaway: stalled beyond timeout, and on its CPU (cpuNow-cpuAtProgress,
// in ns) for at least half of that. An unread (negative) CPU time never is.
func Runaway(timeout, stalled, cpuNow, cpuAtProgress int64) bool {
	return stalled > timeout && cpuNow >= 0 && cpuAtProgress >= 0 && cpuNow-cpuAtProgress >= stalled/2
}
