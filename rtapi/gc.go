package rtapi

import _ "unsafe" // go:linkname

// runtimeWriteBarrier is set by the runtime exactly while a GC cycle
// marks; its symbol and layout are kept for linkers (go.dev/issue/67401).
//
//go:linkname runtimeWriteBarrier runtime.writeBarrier
var runtimeWriteBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

// GCMarking reports whether a garbage-collection cycle of this process is
// in its mark phase right now: one byte load, no call into the runtime. A
// task body may use it to postpone optional work while the collector runs.
// RT-safe.
func GCMarking() bool { return runtimeWriteBarrier.enabled }
