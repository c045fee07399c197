package sampler

import (
	"fmt"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// LoadStreamer is LinuxCNC's streamer(9) factory
// (hal.Register("streamer", LoadStreamer)): one channel per
// cfg=CFG[,CFG...] string, each with its depth=N[,N...] (DefaultStreamDepth
// if none), its pins, function and FIFO segment. examples/halstreamer
// fills the FIFO from another process; the function streamer.N moves one
// line of it onto the pins each call.
//
// Channel N has the pins:
//
//	streamer.N.pin.M       out  the values of column M, in cfg order
//	streamer.N.curr-depth  out  s32, samples in the FIFO
//	streamer.N.empty       out  bit, TRUE at load and while the FIFO is empty
//	streamer.N.enable      in   bit, TRUE at load: move samples only while TRUE
//	streamer.N.underruns   io   s32, clocked calls that found the FIFO empty
//	streamer.N.clock       in   bit, the clock clock-mode reads
//	streamer.N.clock-mode  in   s32, 0 every call, 1 falling, 2 rising, 3 both edges
//
// As in LinuxCNC's hal_stream, a FIFO of depth slots holds depth-1
// samples.
func LoadStreamer(h *hal.HAL, a *hal.LoadArgs) error {
	return streamerKind.load(h, a, func(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) error {
		_, err := newStreamChannel(c, n, cfg, types, depth)
		return err
	})
}

// set writes a FIFO word to the pin, as the streamer's update does with
// a hal_stream_data union member of the pin's type.
func (p *pin) set(w uint64) {
	switch p.typ {
	case hal.TypeFloat:
		p.f.Set(floatFrom(w))
	case hal.TypeBit:
		p.b.Set(w&1 != 0)
	case hal.TypeS32:
		p.s.Set(int32(uint32(w)))
	case hal.TypeU32:
		p.u.Set(uint32(w))
	case hal.TypeS64:
		p.l.Set(int64(w))
	default:
		p.k.Set(w)
	}
}

// streamChannel is one streamer.N. hdr and data are the host's own
// mapping; in is read from the writer's word and checked (fifoFill),
// out is the channel's own and only published.
type streamChannel struct {
	hdr       *header
	data      []uint64
	depth     uint32
	out       uint32
	pins      []pin
	edges     uint32 // the last two clock states, as LinuxCNC's myclockedge
	currDepth hal.S32
	empty     hal.Bit
	enable    hal.Bit
	underruns hal.S32
	clock     hal.Bit
	clockMode hal.S32
}

func newStreamChannel(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) (*streamChannel, error) {
	seg, hdr, err := streamerKind.newSegment(c, n, cfg, depth)
	if err != nil {
		return nil, err
	}
	streamerKind.publish(hdr) // the FIFO is its zeros

	p := fmt.Sprintf("streamer.%d", n)
	ch := &streamChannel{hdr: hdr, depth: uint32(depth), data: fifoData(seg.Bytes(), len(types), depth)}
	// LinuxCNC's order and initial values: empty TRUE, enable TRUE.
	ch.empty = c.Bit(p+".empty", hal.Out)
	ch.empty.Set(true)
	ch.enable = c.Bit(p+".enable", hal.In)
	ch.enable.Set(true)
	ch.currDepth = c.S32(p+".curr-depth", hal.Out)
	ch.underruns = c.S32(p+".underruns", hal.IO)
	ch.clock = c.Bit(p+".clock", hal.In)
	ch.clockMode = c.S32(p+".clock-mode", hal.In)
	ch.pins = newPins(c, p, types, streamerKind.pinDir)
	c.Export(p, ch.update)
	return ch, c.Err()
}

// fifoData is the FIFO's depth slots of n words in a segment's memory
// whose geometry kind.check (or the host's own newSegment) vouched for.
func fifoData(mem []byte, n int, depth uint64) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[headerSize])), n*int(depth))
}

// fifoFill is hal_stream_depth on indexes another process can write: the
// samples between out and in in a FIFO of depth slots, and false when
// either index lies outside it (a damaged segment). It is the one check
// of a peer's index, on both sides of the FIFO.
func fifoFill(in, out, depth uint32) (int32, bool) {
	if in >= depth || out >= depth {
		return 0, false
	}
	if out > in {
		return int32(depth + in - out), true
	}
	return int32(in - out), true
}

// fifoAdvance is hal_stream_advance: the slot after n.
func fifoAdvance(n, depth uint32) uint32 {
	n++
	if n >= depth {
		return 0
	}
	return n
}

var errFIFOIndex = fmt.Errorf("%w: FIFO index out of range", ErrCorrupt)
