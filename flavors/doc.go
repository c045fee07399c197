// Package flavors names gortapi's backends and explains the choice
// between them. It corresponds to Machinekit-HAL's RTAPI flavors.
//
//   - posix: runs anywhere without privileges. Task threads stay
//     SCHED_OTHER and sleep to each absolute release; with VanillaFIFO
//     (Arvid Brodin's scheme for a non-real-time kernel) they run
//     SCHED_FIFO and are woken by a periodic POSIX timer.
//   - rt-preempt: the real-time backend for PREEMPT_RT kernels (and the
//     Linux-domain fallback on Xenomai and RTAI, which have no native
//     backend here): SCHED_FIFO per task thread, CPU affinity, memory
//     locked, /dev/cpu_dma_latency held at 0.
//   - sim: virtual time for tests, driven by package rtapi/sim;
//     deterministic, needs no privileges, builds on every GOOS (the
//     Linux backends there return ErrNotSupported). It is registered
//     only in a program that imports rtapi/sim (as a database/sql
//     driver is); elsewhere asking for it is ErrNotSupported.
//
// Programs rarely need this package: rtapi.Open selects the flavor named
// by Options.Flavor (or the best one for the kernel) and rtapi.RT.Flavor
// reports the choice. Select makes the same choice without opening an RT,
// to list or explain it. A backend asked for by name that cannot run is
// refused, never silently replaced (Machinekit-HAL issue 263).
package flavors
