package rtapi

import (
	"os"
	"runtime"
	"strings"
	"sync"
	_ "unsafe" // go:linkname
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
// process allocating does not make it late. Each part was measured on and
// off by examples/gcbench; docs/GC.md has the figures. TaskSpec.GCShield
// turns it on or off per task; Auto (the default) shields every task on a
// real-time flavor. For measurements, GORTAPI_GC_SHIELD=off (or a comma
// list of parts to leave out: noraw, noprocs) overrides Auto.
//
//   - Raw sleep: the nanosleep wait keeps the task's P (RawSyscall), so a
//     wake-up never waits for a P in exitsyscall, which under allocation
//     load means waiting for another goroutine's time slice (the
//     execution trace of an unshielded task: a quarter of its wake-ups
//     lose the P, and those wait 1.3 ms at p99, 7.5 ms at worst). Cost: a
//     stop-the-world that begins while the task sleeps waits for the
//     sleep to end (at worst one period, for the whole process) and then
//     stops the task right after its wake-up; and sysmon, which sees a
//     goroutine that never passes through the scheduler, preempts it
//     about every 10 ms, a round trip through a helper thread (49 µs
//     median, milliseconds at worst under load).
//   - GOMAXPROCS headroom: one P more per running shielded task. A raw
//     sleeper holds its P while it sleeps; without the extra P the rest
//     of the process would lose one P per task (goroutine scheduling
//     latency p99 was 3-5x lower with it). Cost: one more P the GC pacer
//     counts (its background workers' 25 % share grows with it), and a
//     stop-the-world when each task starts and ends (changing GOMAXPROCS
//     stops the world).
//
// Measured and left out: passing through the scheduler (runtime.Gosched)
// after a body every few milliseconds, to pre-empt sysmon's forced
// preemption, made things several times worse: the round trip through a
// SCHED_OTHER helper thread is slower than the preemption it avoids.

// shieldParts is what the shield of one task applies.
type shieldParts struct {
	raw, procs bool
}

// shieldEnv reads GORTAPI_GC_SHIELD once.
var shieldEnv = sync.OnceValue(func() string { return os.Getenv("GORTAPI_GC_SHIELD") })

// shieldFor resolves TaskSpec.GCShield on a flavor, given
// GORTAPI_GC_SHIELD's value.
func shieldFor(spec TaskSpec, realTime bool, env string) shieldParts {
	on := spec.GCShield == On || (spec.GCShield == Auto && realTime)
	if !on {
		return shieldParts{}
	}
	p := shieldParts{raw: true, procs: true}
	if spec.GCShield == On {
		return p
	}
	for _, part := range strings.Split(env, ",") {
		switch strings.TrimSpace(part) {
		case "off":
			return shieldParts{}
		case "noraw":
			p.raw = false
		case "noprocs":
			p.procs = false
		}
	}
	return p
}

// Process-wide GOMAXPROCS reservation for shielded tasks.
var procReserve struct {
	sync.Mutex
	reserved int
	base     int
}

// reserveProc raises GOMAXPROCS by one for a starting shielded task.
func reserveProc() {
	procReserve.Lock()
	defer procReserve.Unlock()
	if procReserve.reserved == 0 {
		procReserve.base = runtime.GOMAXPROCS(0)
	}
	procReserve.reserved++
	runtime.GOMAXPROCS(procReserve.base + procReserve.reserved)
}

// releaseProc gives a reservation back when its task ends; the last one
// restores the GOMAXPROCS found before the first.
func releaseProc() {
	procReserve.Lock()
	defer procReserve.Unlock()
	procReserve.reserved--
	runtime.GOMAXPROCS(procReserve.base + procReserve.reserved)
}
