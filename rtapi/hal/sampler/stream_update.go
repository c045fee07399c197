package sampler

import (
	"math"
	"sync/atomic"
	"time"
)

// The streamer's hot path: no allocation, lock or system call.

func floatFrom(w uint64) float64 { return math.Float64frombits(w) }

// update is streamer.N: one call of LinuxCNC's streamer update(). It
// keeps the last two clock states; when enabled and clock-mode allows
// this call (0 every call, 1 a falling edge, 2 a rising edge, 3 either
// edge, any other value every call) it is clocked. curr-depth and empty
// report the FIFO every call. A clocked call moves the oldest sample
// onto the pins, or, if the FIFO is empty, counts an underrun and leaves
// the pins as they are.
//
// The writer's index is read once and checked (fifoFill): one outside
// the FIFO (a damaged segment) reads as an empty FIFO.
func (ch *streamChannel) update(_ time.Duration, _ int64) {
	clk := uint32(0)
	if ch.clock.Get() {
		clk = 1
	}
	ch.edges = (ch.edges<<1 | clk) & 3
	doclk := false
	if ch.enable.Get() {
		doclk = true
		switch ch.clockMode.Get() {
		case 1:
			doclk = ch.edges == 2
		case 2:
			doclk = ch.edges == 1
		case 3:
			doclk = ch.edges == 1 || ch.edges == 2
		}
	}
	depth, _ := fifoFill(atomic.LoadUint32(&ch.hdr.In), ch.out, ch.depth)
	ch.currDepth.Set(depth)
	ch.empty.Set(depth == 0)
	if !doclk {
		return
	}
	if depth == 0 {
		ch.underruns.Set(ch.underruns.Get() + 1)
		return
	}
	n := len(ch.pins)
	row := ch.data[int(ch.out)*n : int(ch.out)*n+n]
	for i := range ch.pins {
		ch.pins[i].set(row[i])
	}
	ch.out = fifoAdvance(ch.out, ch.depth)
	atomic.StoreUint32(&ch.hdr.Out, ch.out)
}
