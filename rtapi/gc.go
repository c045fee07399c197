package rtapi

import (
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
