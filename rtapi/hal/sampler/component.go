package sampler

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/ipc"
)

// Load is the sampler's factory (hal.Register("sampler", Load)): one
// channel per cfg=CFG[,CFG...] string, each with its depth=N[,N...]
// (DefaultDepth if none), its pins, function and ring segment.
func Load(h *hal.HAL, a *hal.LoadArgs) error {
	cfgArg, ok := a.Get("cfg")
	if !ok || cfgArg == "" {
		return fmt.Errorf("loadrt sampler: no cfg= (e.g. cfg=ffb): %w", rtapi.ErrInvalid)
	}
	cfgs := strings.Split(cfgArg, ",")
	if len(cfgs) > MaxChannels {
		return fmt.Errorf("loadrt sampler: %d channels, at most %d: %w", len(cfgs), MaxChannels, rtapi.ErrInvalid)
	}
	depths := make([]uint64, len(cfgs))
	for i := range depths {
		depths[i] = DefaultDepth
	}
	if d, ok := a.Get("depth"); ok {
		list := strings.Split(d, ",")
		if len(list) > len(cfgs) {
			return fmt.Errorf("loadrt sampler: %d depths for %d cfg strings: %w", len(list), len(cfgs), rtapi.ErrInvalid)
		}
		for i, s := range list {
			n, err := strconv.ParseUint(s, 0, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("loadrt sampler: depth %q: want a positive integer: %w", s, rtapi.ErrInvalid)
			}
			depths[i] = n
		}
	}
	types := make([][]hal.Type, len(cfgs))
	for i, cfg := range cfgs {
		t, err := ParseCfg(cfg)
		if err != nil {
			return fmt.Errorf("loadrt %w", err)
		}
		if ringCapacity(len(t), depths[i]) == 0 {
			return fmt.Errorf("loadrt sampler: channel %d: depth %d of %d pins needs more than %d bytes: %w",
				i, depths[i], len(t), MaxRingBytes, rtapi.ErrInvalid)
		}
		types[i] = t
	}
	c, err := h.NewComponent("sampler")
	if err != nil {
		return err
	}
	for i := range cfgs {
		if _, err := newChannel(c, i, cfgs[i], types[i], depths[i]); err != nil {
			return err
		}
	}
	return c.Ready()
}

// source is one sampled pin: the handle of its type.
type source struct {
	typ hal.Type
	f   hal.Float
	b   hal.Bit
	s   hal.S32
	u   hal.U32
	l   hal.S64
	k   hal.U64
}

// word returns the pin's value as HAL holds it in a word (hal.FormatValue).
func (p *source) word() uint64 {
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
	pins      []source
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
	capacity := ringCapacity(len(types), depth)
	seg, err := c.NewSegment(Key+uint32(n), segmentSize(capacity))
	if err != nil {
		return nil, err
	}
	ring, err := ipc.RecordRingAt(seg, headerSize, ipc.RingSize(capacity))
	if err != nil {
		return nil, err
	}
	hdr := (*header)(unsafe.Pointer(&seg.Bytes()[0]))
	hdr.Version, hdr.NPins, hdr.Depth = layoutVersion, uint32(len(types)), depth
	hdr.RingOff, hdr.RingSize = headerSize, uint64(ipc.RingSize(capacity))
	copy(hdr.Cfg[:], cfg)
	atomic.StoreUint64(&hdr.Magic, layoutMagic)

	p := fmt.Sprintf("sampler.%d", n)
	ch := &channel{ring: ring, payload: recordBytes(len(types)), slot: recordBytes(len(types)) + 8,
		pins: make([]source, len(types))}
	ch.depth = int32(depth) // ringCapacity bounds depth to MaxRingBytes/40
	ch.full = c.Bit(p+".full", hal.Out)
	ch.enable = c.Bit(p+".enable", hal.In)
	ch.enable.Set(true)
	ch.currDepth = c.S32(p+".curr-depth", hal.Out)
	ch.overruns = c.S32(p+".overruns", hal.IO)
	ch.sampleNum = c.S32(p+".sample-num", hal.IO)
	for i, t := range types {
		name := fmt.Sprintf("%s.pin.%d", p, i)
		src := &ch.pins[i]
		src.typ = t
		switch t {
		case hal.TypeFloat:
			src.f = c.Float(name, hal.In)
		case hal.TypeBit:
			src.b = c.Bit(name, hal.In)
		case hal.TypeS32:
			src.s = c.S32(name, hal.In)
		case hal.TypeU32:
			src.u = c.U32(name, hal.In)
		case hal.TypeS64:
			src.l = c.S64(name, hal.In)
		case hal.TypeU64:
			src.k = c.U64(name, hal.In)
		}
	}
	c.Export(p, ch.sample)
	return ch, c.Err()
}
