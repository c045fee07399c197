// Package guard is gortapi's runtime guard: the one loop that watches
// real-time task threads from outside the Go runtime (docs/GC.md, "The
// runtime guard").
//
// The guard is this program started again (Start) as a process that runs
// only a loop at SCHED_FIFO above the tasks; a process outside the Go
// runtime is what a livelock of the runtime needs, since nothing inside it
// runs then. At every look it reads each watched thread's schedstat and
// the cycle count its task stores in its Slot of a page shared with the
// guard; for a thread whose count did not move since the last look it
// also reads its stat, and applies two rules:
//
//   - spin bound: a thread runnable for its bound without sleeping or
//     completing a cycle, and on its CPU for a 64th of it or more, is set
//     to SCHED_OTHER at the next look, a tick later, unless it slept
//     meanwhile (a stop of the host's counts as CPU time), until it has
//     been switched out once, then given its policy back (a SCHED_FIFO thread spinning
//     in the runtime on a state that a SCHED_OTHER thread sharing its CPU
//     holds, docs/GC.md, "Livelocks");
//   - watchdog: a thread whose task completed no cycle within its timeout
//     (its Slot's count) and that was on its CPU for half of it is set to SCHED_OTHER
//     for good and reported (Event.Fault).
//
// Every TickEvery it also sends Event.Tick, the clock of its owner's
// slower steps. Events reach the owner on a goroutine of their own.
//
// The guard is recognised by this package's init: init functions of
// packages initialised before this one run in the guard too.
package guard
