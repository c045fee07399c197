// Package spinguard bounds how long a real-time thread of this process can
// keep its CPU without a break.
//
// A SCHED_FIFO thread spinning in the Go runtime on a state that a
// SCHED_OTHER thread sharing its CPU holds (a GC worker, sysmon) never
// lets that thread run, until RT throttling steps in (docs/GC.md, "The
// same livelock in a task set").
//
// The guard is this program started again (Start) as a process that runs
// only a loop at SCHED_FIFO above the tasks. It reads each watched
// thread's schedstat and stat; a thread runnable for its bound without
// sleeping is set to SCHED_OTHER until it has been switched out once, then
// given its policy back (docs/GC.md, "The spin guard").
//
// The guard is recognised by this package's init: init functions of
// packages initialised before this one run in the guard too.
package spinguard
