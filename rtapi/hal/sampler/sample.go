package sampler

import (
	"errors"
	"math"
	"time"
	"unsafe"
)

// The sampler's hot path: no allocation or lock; the only system call is
// the ring's FUTEX_WAKE when a reader sleeps.

func floatBits(f float64) uint64 { return math.Float64bits(f) }

// sample is sampler.N: one cycle. Like LinuxCNC's sample() on its
// hal_stream, the ring holds at most depth-1 samples: a sample that finds
// it so full is dropped and counted in overruns, full goes TRUE and
// curr-depth reads depth; one that fits sets full FALSE and curr-depth to
// the samples in the ring. Disabled, it only reports the fill.
func (ch *channel) sample(_ time.Duration, now int64) {
	cycle := ch.cycle
	ch.cycle++
	if !ch.enable.Get() {
		used := ch.used()
		ch.currDepth.Set(used)
		ch.full.Set(used >= ch.depth-1)
		return
	}
	var rec []byte
	err := errFull
	if ch.used() < ch.depth-1 {
		rec, err = ch.ring.Reserve(ch.payload)
	}
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
	ch.full.Set(false)
	ch.currDepth.Set(ch.used())
}

// errFull is sample's refusal at depth-1 samples; it never leaves sample.
var errFull = errors.New("sampler: ring full")

// used is the samples in the ring: its unread bytes over the record size
// (a wrap's padding is less than one record), at most depth.
func (ch *channel) used() int32 {
	return int32(min(ch.ring.Used()/ch.slot, int(ch.depth)))
}
