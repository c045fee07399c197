// Package backend holds gortapi's backends, the flavors: how a task's
// thread is scheduled and how it sleeps until its next release. Package
// flavors exports their names and Select; rtapi uses the rest.
//
//   - posix: anywhere, unprivileged. SCHED_OTHER threads sleeping to each
//     absolute release. With VanillaFIFO (Arvid Brodin's scheme) SCHED_FIFO
//     threads woken by a POSIX timer aimed at each; where SCHED_FIFO is
//     refused it runs SCHED_OTHER and says so (Strict refuses instead).
//   - rt-preempt: PREEMPT_RT kernels (and Xenomai or RTAI's Linux domain):
//     SCHED_FIFO, CPU affinity, memory locked, cpu_dma_latency held at 0.
//   - sim: virtual time for tests, registered by package rtapi/sim; builds
//     on every GOOS (where the Linux backends return ErrNotSupported).
//
// Select picks a backend from a kerneldetect.Report and the settings, and
// says why; one asked for by name that cannot run is refused, never
// replaced (flavors.ExampleSelect).
//
// The per-cycle path is the Waker, whose Wait neither allocates nor locks.
// Everything else (Select, Bind, Close) is set-up code: it allocates, logs
// and may block.
package backend
