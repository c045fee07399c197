package rtapi

import "time"

// SimOptions configure the sim flavor (Options.Sim), which package
// rtapi/sim registers and drives. The zero value works; other flavors
// ignore them.
type SimOptions struct {
	// Seed seeds the fault injection. Each task draws from its own
	// stream, keyed by Seed and its name: adding a task changes no other.
	Seed uint64
	// HangTimeout is how long, in real time, a controller call waits for
	// a body to come back to WaitPeriod before failing with ErrTimeout.
	// Zero: 5 s.
	HangTimeout time.Duration
	// TraceLimit is how many of the most recent trace events are kept.
	// Zero: 4096; negative: none (Trace still gives the count and the
	// digest of every event).
	TraceLimit int
	// SharedCPU runs all tasks on one simulated CPU, scheduled like
	// SCHED_FIFO: a base thread's cost shows up as the servo thread's
	// latency and execution time. Off (the default): a CPU per task.
	SharedCPU bool
}
