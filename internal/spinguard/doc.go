// Package spinguard bounds how long a real-time thread of this process can
// keep its CPU without a break.
//
// The Go runtime has loops that spin until another thread of the process
// lets go of something: exitsyscall and execute spin on a goroutine's
// status while a GC worker or sysmon holds its scan bit. Those holders
// are ordinary SCHED_OTHER threads. A SCHED_FIFO task thread spinning
// there never lets a holder that shares its CPU run (sched_yield only
// yields to equal real-time priorities), so the spin lasts until the
// kernel's RT throttling steps in — 950 ms of every second by default,
// never where sched_rt_runtime_us is -1 — and every task waiting on the
// same runtime state stalls with it (docs/GC.md, "The same livelock in a
// task set").
//
// The guard is a second process, this program's binary started again
// (Start), that runs nothing but a loop at SCHED_FIFO above the tasks. It
// never allocates after start-up, runs with the garbage collector off and
// one P, and sleeps with raw system calls; every one of its threads runs
// at its priority, since its runtime may move the loop to any of them,
// and nothing in the guarded process can make it wait. At each look (every
// tick while it has demoted a thread, otherwise when a thread's bound can
// have passed, at most three ticks apart) it reads
// /proc/<pid>/task/<tid>/schedstat and stat of each watched thread; a
// thread that was runnable for its bound without sleeping (not switched
// in again, or only after preemptions, such as the guard's own on a
// shared CPU: its voluntary switches in status did not grow) is set to
// SCHED_OTHER until it has been switched out once (or for one more bound),
// then given its policy back. A holder that shares its CPU then runs, and
// the spin ends.
//
// The guard starts by re-executing /proc/self/exe with a variable in its
// environment that this package's init function recognises: init
// functions of packages initialised before this one run in the guard too
// (those whose import paths sort before it and that it does not depend
// on).
package spinguard
