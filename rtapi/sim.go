package rtapi

import "time"

// SimOptions configure the sim flavor (Options.Sim). The zero value
// works. Other flavors ignore them. Package rtapi/sim registers the
// flavor (a program that opens it imports that package), drives the
// virtual clock, injects jitter and faults, and reads the trace.
type SimOptions struct {
	// Seed seeds the fault injection: each task draws its wake-up
	// lateness from its own stream, keyed by Seed and the task's name, so
	// adding a task does not change what the others draw.
	Seed uint64
	// HangTimeout is how long, in real time, a controller call waits for
	// a task body to come back to WaitPeriod before it fails with an
	// error naming the task (errors.Is ErrTimeout). Zero: 5 s.
	HangTimeout time.Duration
	// TraceLimit is how many of the most recent trace events are kept.
	// Zero: 4096; negative: none (Trace still gives the count and the
	// digest of every event).
	TraceLimit int
	// SharedCPU runs all tasks on one simulated CPU, scheduled like
	// SCHED_FIFO: a release waits while a task of higher or equal
	// priority executes, and a higher-priority task preempts lower ones,
	// lengthening their cycles by its cost. So a base thread's cost shows
	// up as the servo thread's latency and execution time. Off (the
	// default): each task behaves as if it had a CPU of its own.
	SharedCPU bool
}
