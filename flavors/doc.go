// Package flavors names gortapi's backends and explains the choice
// between them. It corresponds to Machinekit-HAL's RTAPI flavors.
//
//   - posix: anywhere, unprivileged. SCHED_OTHER threads sleeping to each
//     absolute release; with VanillaFIFO (Arvid Brodin's scheme for a
//     non-real-time kernel) SCHED_FIFO threads woken by a POSIX timer.
//   - rt-preempt: PREEMPT_RT kernels (and Xenomai or RTAI's Linux domain):
//     SCHED_FIFO, CPU affinity, memory locked, cpu_dma_latency held at 0.
//   - sim: deterministic virtual time for tests, unprivileged, on every
//     GOOS (where the Linux backends return ErrNotSupported). Only a
//     program that imports rtapi/sim has it; elsewhere it is
//     ErrNotSupported.
//
// Programs rarely need this package: rtapi.Open selects the flavor
// (Options.Flavor, or the best for the kernel) and RT.Flavor reports it.
// Select makes the same choice without an RT, to list or explain it. A
// backend asked for by name that cannot run is refused, never replaced.
package flavors
