package guard

import (
	"errors"
	"sync/atomic"
	"time"
)

// Event is what the guard reports about a watched thread, or its tick.
type Event struct {
	Tid int
	// Demoted: it ran for Ran without a break and was set to SCHED_OTHER.
	// Fault: it completed no cycle for Stalled, on its CPU for half of
	// that, after Cycles cycles, and was set to SCHED_OTHER for good (Err
	// if that failed). Tick: TickEvery passed; Tid is 0. Otherwise it got
	// its policy back, or failed to (Err).
	Demoted, Fault, Tick bool
	Ran, Stalled         time.Duration
	Cycles               int64
	Err                  error
}

// ErrStart is wrapped by every error of Start.
var ErrStart = errors.New("runtime guard did not start")

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
