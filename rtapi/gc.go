package rtapi

import (
	_ "unsafe" // go:linkname

	"github.com/gortapi/gortapi/flavors"
)

// The garbage collector's state, as a task can read it in one load.
//
// runtime.writeBarrier is the flag the compiler's write-barrier checks
// read: the runtime turns it on when a GC cycle enters its mark phase
// (inside the sweep-termination stop-the-world) and off at mark
// termination (inside that stop-the-world). It is therefore exactly "a GC
// cycle is marking", the phase in which allocating goroutines pay mark
// assists, GC workers take a quarter of GOMAXPROCS, and goroutine stacks
// are scanned. The runtime keeps the symbol and its layout for packages
// that link to it (go.dev/issue/67401: "Do not remove or change the type
// signature"), so reading it is stable across Go releases.
//
//go:linkname runtimeWriteBarrier runtime.writeBarrier
var runtimeWriteBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

// gcMarking reports whether a garbage-collection cycle is marking right
// now. RT-safe: one byte load, no call into the runtime.
func gcMarking() bool { return runtimeWriteBarrier.enabled }

// GCMarking reports whether a garbage-collection cycle of this process is
// in its mark phase right now (between the two stop-the-world pauses of a
// cycle). A task body may read it, for instance to postpone optional work
// while the collector runs.
//
// RT-safe: a single memory load.
func GCMarking() bool { return gcMarking() }

// The GC shield: what a real-time task needs so that the rest of the
// process allocating does not make it late. Each candidate was measured on
// and off by examples/gcbench; docs/GC.md has the figures. TaskSpec.GCShield
// turns it on or off per task; Auto (the default) shields every task on a
// real-time flavor. Options.GCShield (RTAPI_GC_SHIELD, -rtapi.gc-shield)
// changes that default, e.g. to measure without the shield.
//
// The shield is a raw sleep: the nanosleep wait keeps the task's P
// (RawSyscall), so a wake-up never waits for a P in exitsyscall, which
// under allocation load means waiting for another goroutine's time slice
// (the execution trace of an unshielded task: a quarter of its wake-ups
// lose the P, and those wait 1.3 ms at p99, 7.5 ms at worst). It also
// keeps the task out of the scheduler's syscall state, where a SCHED_FIFO
// thread returning from the kernel can spin on a goroutine status that
// sysmon or a GC worker (SCHED_OTHER) holds. Costs: the task holds its P
// while it sleeps, so the rest of the process has one P fewer per
// shielded task; a stop-the-world that begins while the task sleeps waits
// for the sleep to end (sleeps are cut into flavors.RawSleepChunk pieces)
// and then stops the task right after its wake-up; and sysmon, seeing a
// goroutine that never passes through the scheduler, preempts it about
// every 10 ms, a round trip through a helper thread (49 µs median,
// milliseconds at worst under load).
//
// Measured and left out: one more P per shielded task (GOMAXPROCS above
// the CPU count) gave the P back to the rest of the process, but with
// several SCHED_FIFO tasks on all CPUs it produced livelocks of up to the
// kernel's RT throttling period (FIFO threads spinning in the runtime on
// something a starved SCHED_OTHER runtime thread held; the watchdog
// caught them); a runtime.Gosched after the body every 4 ms to beat
// sysmon's forced preemption made p99 4-9x worse; pinning the goroutine
// to its P around the sleep (procPin) multiplied scheduler parks by 8.

// shieldRaw resolves TaskSpec.GCShield on a flavor, given the instance's
// default (Options.GCShield): whether the task sleeps raw.
func shieldRaw(spec TaskSpec, realTime bool, instance flavors.Toggle) bool {
	choice := spec.GCShield
	if choice == Auto {
		choice = instance
	}
	switch choice {
	case On:
		return true
	case Off:
		return false
	}
	return realTime
}
