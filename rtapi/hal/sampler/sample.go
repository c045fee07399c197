package sampler

import (
	"math"
	"time"
	"unsafe"
)

// The sampler's hot path: no allocation or lock; the only system call is
// the ring's FUTEX_WAKE when a reader sleeps.

func floatBits(f float64) uint64 { return math.Float64bits(f) }

// sample is sampler.N: one cycle.
func (ch *channel) sample(_ time.Duration, now int64) {
	cycle := ch.cycle
	ch.cycle++
	if !ch.enable.Get() {
		ch.report()
		return
	}
	rec, err := ch.ring.Reserve(ch.payload)
	if err != nil { // full (or a reader wrote a bad tail): drop, count, go on
		ch.dropped++
		ch.overruns.Set(ch.overruns.Get() + 1)
		ch.full.Set(true)
		ch.currDepth.Set(ch.depth)
		return
	}
	w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(rec))), len(rec)/8)
	w[wordCycle], w[wordTime], w[wordDropped] = cycle, uint64(now), ch.dropped
	vals := w[wordPins:]
	for i := range ch.pins {
		vals[i] = ch.pins[i].word()
	}
	_ = ch.ring.Commit()
	ch.sampleNum.Set(int32(uint32(cycle)))
	ch.report()
}

// report sets full and curr-depth from the ring's fill.
func (ch *channel) report() {
	used := int32(ch.ring.Used() / ch.slot)
	ch.full.Set(used >= ch.depth)
	ch.currDepth.Set(used)
}
