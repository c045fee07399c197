package sampler

import (
	"fmt"

	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Load is the sampler's factory (hal.Register("sampler", Load)): one
// channel per cfg=CFG[,CFG...] string, each with its depth=N[,N...]
// (DefaultDepth if none), its pins, function and ring segment.
func Load(h *hal.HAL, a *hal.LoadArgs) error {
	return samplerKind.load(h, a, func(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) error {
		_, err := newChannel(c, n, cfg, types, depth)
		return err
	})
}

// word returns the pin's value as HAL holds it in a word (hal.FormatValue).
func (p *pin) word() uint64 {
	switch p.typ {
	case hal.TypeFloat:
		return floatBits(p.f.Get())
	case hal.TypeBit:
		if p.b.Get() {
			return 1
		}
		return 0
	case hal.TypeS32:
		return uint64(int64(p.s.Get()))
	case hal.TypeU32:
		return uint64(p.u.Get())
	case hal.TypeS64:
		return uint64(p.l.Get())
	default:
		return p.k.Get()
	}
}

// channel is one sampler.N; its counters are private to the writer.
type channel struct {
	ring      *ipc.RecordRing
	pins      []pin
	payload   int    // bytes of one record's payload
	slot      int    // bytes of one record in the ring
	depth     int32  // depth=: the ring holds depth-1 samples, as LinuxCNC's
	cycle     uint64 // calls so far
	dropped   uint64 // samples dropped so far
	enable    hal.Bit
	full      hal.Bit
	currDepth hal.S32
	overruns  hal.S32
	sampleNum hal.S32
}

func newChannel(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) (*channel, error) {
	seg, hdr, err := samplerKind.newSegment(c, n, cfg, depth)
	if err != nil {
		return nil, err
	}
	ring, err := ipc.RecordRingAt(seg, headerSize, int(hdr.DataSize))
	if err != nil {
		return nil, err
	}
	samplerKind.publish(hdr)

	p := fmt.Sprintf("sampler.%d", n)
	ch := &channel{ring: ring, payload: recordBytes(len(types)), slot: recordBytes(len(types)) + 8}
	ch.depth = int32(depth) // ringCapacity bounds depth to MaxRingBytes/40
	ch.full = c.Bit(p+".full", hal.Out)
	ch.enable = c.Bit(p+".enable", hal.In)
	ch.enable.Set(true)
	ch.currDepth = c.S32(p+".curr-depth", hal.Out)
	ch.overruns = c.S32(p+".overruns", hal.IO)
	ch.sampleNum = c.S32(p+".sample-num", hal.IO)
	ch.pins = newPins(c, p, types, samplerKind.pinDir)
	c.Export(p, ch.sample)
	return ch, c.Err()
}
