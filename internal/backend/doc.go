// Package backend holds gortapi's backends, the flavors: how a task's
// thread is scheduled and how it sleeps until its next release. Package
// flavors exports their names and Select; rtapi uses the rest.
//
// Backends, registered by name:
//
//   - posix: runs anywhere without privileges. Task threads stay
//     SCHED_OTHER and sleep to each absolute release (a futex wait on
//     the CLOCK_MONOTONIC hrtimer, as clock_nanosleep, which Stop can
//     end). With the VanillaFIFO runtime flag (Arvid Brodin's scheme for
//     a non-real-time kernel) it runs them SCHED_FIFO and wakes them with
//     a periodic POSIX timer aimed at the task's own thread; when the
//     kernel refuses SCHED_FIFO it keeps running SCHED_OTHER and says so
//     (Strict refuses instead).
//   - rt-preempt: the real-time backend for PREEMPT_RT kernels (and the
//     Linux-domain fallback on Xenomai and RTAI, which have no native
//     backend here): SCHED_FIFO per task thread, CPU affinity, memory
//     locked, /dev/cpu_dma_latency held at 0.
//   - sim: virtual time for tests, in package rtapi/sim, which registers
//     it from its init (Register) and drives its clock; Lookup says to
//     import that package where nothing did. Deterministic, needs no
//     privileges, builds on every GOOS (the Linux backends there return
//     ErrNotSupported).
//
// Select picks a backend from a kerneldetect.Report and the user's
// settings, and says why. A backend that was asked for by name but cannot
// run is refused, never silently replaced (Machinekit-HAL issue 263).
// flavors.ExampleSelect shows a choice and its Why.
//
// The per-cycle path is the Waker: a concrete type whose Wait neither
// allocates nor locks and makes no interface call on the real backends.
// Everything else here (Select, Bind, Close) is set-up code: it allocates,
// logs and may block.
package backend
