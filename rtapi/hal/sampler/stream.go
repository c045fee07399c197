package sampler

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// DefaultStreamDepth is a streamer channel's depth when depth= does not
// give one (LinuxCNC has no default: it makes no channel).
const DefaultStreamDepth = 1000

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
	cfgArg, ok := a.Get("cfg")
	if !ok || cfgArg == "" {
		return fmt.Errorf("loadrt streamer: no cfg= (e.g. cfg=ffb): %w", rtapi.ErrInvalid)
	}
	cfgs := strings.Split(cfgArg, ",")
	if len(cfgs) > MaxStreamChannels {
		return fmt.Errorf("loadrt streamer: %d channels, at most %d: %w", len(cfgs), MaxStreamChannels, rtapi.ErrInvalid)
	}
	depths := make([]uint64, len(cfgs))
	for i := range depths {
		depths[i] = DefaultStreamDepth
	}
	if d, ok := a.Get("depth"); ok {
		list := strings.Split(d, ",")
		if len(list) > len(cfgs) {
			return fmt.Errorf("loadrt streamer: %d depths for %d cfg strings: %w", len(list), len(cfgs), rtapi.ErrInvalid)
		}
		for i, s := range list {
			n, err := strconv.ParseUint(s, 0, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("loadrt streamer: depth %q: want a positive integer: %w", s, rtapi.ErrInvalid)
			}
			depths[i] = n
		}
	}
	types := make([][]hal.Type, len(cfgs))
	for i, cfg := range cfgs {
		t, err := parseStreamCfg(cfg)
		if err != nil {
			return fmt.Errorf("loadrt %w", err)
		}
		if streamSize(len(t), depths[i]) == 0 {
			return fmt.Errorf("loadrt streamer: channel %d: depth %d of %d pins: want 2 to %d slots: %w",
				i, depths[i], len(t), MaxStreamBytes/(8*len(t)), rtapi.ErrInvalid)
		}
		types[i] = t
	}
	c, err := h.NewComponent("streamer")
	if err != nil {
		return err
	}
	for i := range cfgs {
		if _, err := newStreamChannel(c, i, cfgs[i], types[i], depths[i]); err != nil {
			return err
		}
	}
	return c.Ready()
}

// sink is one streamed pin: the handle of its type.
type sink struct {
	typ hal.Type
	f   hal.Float
	b   hal.Bit
	s   hal.S32
	u   hal.U32
	l   hal.S64
	k   hal.U64
}

// set writes a FIFO word to the pin, as the streamer's update does with
// a hal_stream_data union member of the pin's type.
func (p *sink) set(w uint64) {
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
// mapping; in is read from the writer's word and checked, out is the
// channel's own and only published.
type streamChannel struct {
	hdr       *streamHeaderT
	data      []uint64
	depth     uint32
	out       uint32
	pins      []sink
	edges     uint32 // the last two clock states, as LinuxCNC's myclockedge
	currDepth hal.S32
	empty     hal.Bit
	enable    hal.Bit
	underruns hal.S32
	clock     hal.Bit
	clockMode hal.S32
}

func newStreamChannel(c *hal.Component, n int, cfg string, types []hal.Type, depth uint64) (*streamChannel, error) {
	seg, err := c.NewSegment(StreamKey+uint32(n), streamSize(len(types), depth))
	if err != nil {
		return nil, err
	}
	mem := seg.Bytes()
	hdr := (*streamHeaderT)(unsafe.Pointer(&mem[0]))
	hdr.Version, hdr.NPins, hdr.Depth, hdr.DataOff = streamVersion, uint32(len(types)), depth, streamHeader
	copy(hdr.Cfg[:], cfg)
	atomic.StoreUint64(&hdr.Magic, streamMagic)

	p := fmt.Sprintf("streamer.%d", n)
	ch := &streamChannel{hdr: hdr, depth: uint32(depth), pins: make([]sink, len(types)),
		data: unsafe.Slice((*uint64)(unsafe.Pointer(&mem[streamHeader])), len(types)*int(depth))}
	// LinuxCNC's order and initial values: empty TRUE, enable TRUE.
	ch.empty = c.Bit(p+".empty", hal.Out)
	ch.empty.Set(true)
	ch.enable = c.Bit(p+".enable", hal.In)
	ch.enable.Set(true)
	ch.currDepth = c.S32(p+".curr-depth", hal.Out)
	ch.underruns = c.S32(p+".underruns", hal.IO)
	ch.clock = c.Bit(p+".clock", hal.In)
	ch.clockMode = c.S32(p+".clock-mode", hal.In)
	for i, t := range types {
		name := fmt.Sprintf("%s.pin.%d", p, i)
		dst := &ch.pins[i]
		dst.typ = t
		switch t {
		case hal.TypeFloat:
			dst.f = c.Float(name, hal.Out)
		case hal.TypeBit:
			dst.b = c.Bit(name, hal.Out)
		case hal.TypeS32:
			dst.s = c.S32(name, hal.Out)
		case hal.TypeU32:
			dst.u = c.U32(name, hal.Out)
		case hal.TypeS64:
			dst.l = c.S64(name, hal.Out)
		case hal.TypeU64:
			dst.k = c.U64(name, hal.Out)
		}
	}
	c.Export(p, ch.update)
	return ch, c.Err()
}
