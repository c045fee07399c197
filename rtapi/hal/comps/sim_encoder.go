package comps

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() {
	hal.Register("sim_encoder", loadSimEncoder)
}

// loadSimEncoder is sim_encoder's factory: num_chan=N or names=a,b, at
// most 8, default 1; instances are sim-encoder.N.
func loadSimEncoder(h *hal.HAL, a *hal.LoadArgs) error {
	names, err := cChannels(a, "sim-encoder", 1)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	s := newSimEncoder(c, names)
	c.Export("sim-encoder.make-pulses", s.makePulses)
	c.Export("sim-encoder.update-speed", s.updateSpeed)
	return c.Ready()
}

// simEncChan is one simulated encoder (sim_encoder.c's sim_enc_t).
type simEncChan struct {
	addval atomic.Int64 // written by update-speed, read by make-pulses (C long)
	accum  uint64       // make-pulses: the frequency generator (C unsigned long)
	state  int8         // make-pulses: quadrature state 0..3
	cycle  int64        // make-pulses: pulse within the revolution

	phaseA, phaseB, phaseZ hal.Bit
	ppr                    hal.U32
	scale, speed           hal.Float
	rawcounts              hal.S32

	oldScale, scaleMult float64 // update-speed
}

// simEncoder is one loadrt sim_encoder. periodns is make-pulses' period,
// which update-speed uses for its constants (sim_encoder.c's globals).
type simEncoder struct {
	chans    []simEncChan
	periodns atomic.Int64

	oldPeriodns               int64
	periodfp, maxf, freqscale float64
}

// newSimEncoder makes sim_encoder.c's pins for each channel, in its
// order, with its initial values and its start-up period of 50 µs.
func newSimEncoder(c *hal.Component, names []string) *simEncoder {
	s := &simEncoder{chans: make([]simEncChan, len(names))}
	s.periodns.Store(50000)
	s.setConstants(50000)
	for i, p := range names {
		ch := &s.chans[i]
		ch.ppr = c.U32(p+".ppr", hal.IO)
		ch.scale = c.Float(p+".scale", hal.IO)
		ch.speed = c.Float(p+".speed", hal.In)
		ch.phaseA = c.Bit(p+".phase-A", hal.Out)
		ch.phaseB = c.Bit(p+".phase-B", hal.Out)
		ch.phaseZ = c.Bit(p+".phase-Z", hal.Out)
		ch.rawcounts = c.S32(p+".rawcounts", hal.In)
		if c.Err() != nil {
			break
		}
		ch.ppr.Set(100)
		ch.scale.Set(1.0)
		ch.oldScale, ch.scaleMult = 0.0, 1.0
	}
	return s
}

// setConstants is sim_encoder.c's recomputation of periodfp, maxf and
// freqscale from the make-pulses period.
func (s *simEncoder) setConstants(periodns int64) {
	s.periodfp = float64(periodns) * 0.000000001
	s.maxf = 1.0 / s.periodfp
	s.freqscale = ((1 << 30) * 2.0) / s.maxf
	s.oldPeriodns = periodns
}

// makePulses is sim-encoder.make-pulses (sim_encoder.c's make_pulses):
// each channel's accumulator gains addval; when it crosses a multiple of
// 2^31 the quadrature state steps by one, rawcounts with it, and phase-A,
// phase-B and phase-Z follow. C's long is 64 bits here, as on x86-64
// LinuxCNC: the direction is addval >> 31 kept in an int, so an addval of
// exactly +2^31 (speed at the limit) steps backwards, as there. Meant
// for the base thread; it uses no floating point.
// RT-safe.
func (s *simEncoder) makePulses(period time.Duration, _ int64) {
	s.periodns.Store(int64(period))
	for i := range s.chans {
		ch := &s.chans[i]
		addval := ch.addval.Load()
		overunder := ch.accum >> 31
		ch.accum += uint64(addval)
		overunder ^= ch.accum >> 31
		if uint32(overunder) != 0 {
			if int32(addval>>31) != 0 {
				ch.rawcounts.Set(ch.rawcounts.Get() - 1)
				if ch.state--; ch.state < 0 {
					ch.state = 3
					if ch.cycle--; ch.cycle < 0 {
						ch.cycle += int64(ch.ppr.Get())
					}
				}
			} else {
				ch.rawcounts.Set(ch.rawcounts.Get() + 1)
				if ch.state++; ch.state > 3 {
					ch.state = 0
					ppr := int64(ch.ppr.Get())
					if ch.cycle++; ch.cycle >= ppr {
						ch.cycle -= ppr
					}
				}
			}
		}
		switch ch.state {
		case 0:
			ch.phaseA.Set(true)
			ch.phaseB.Set(false)
		case 1:
			ch.phaseA.Set(true)
			ch.phaseB.Set(true)
		case 2:
			ch.phaseA.Set(false)
			ch.phaseB.Set(true)
		case 3:
			ch.phaseA.Set(false)
			ch.phaseB.Set(false)
		default:
			ch.state = 0
		}
		ch.phaseZ.Set(ch.state == 0 && ch.cycle == 0)
	}
}

// updateSpeed is sim-encoder.update-speed (sim_encoder.c's
// update_speed): it turns speed / scale (revolutions per second) into
// counts per second, ppr * 4 a revolution, limited to one count per
// make-pulses period, and that into addval. Meant for the servo thread.
// RT-safe.
func (s *simEncoder) updateSpeed(time.Duration, int64) {
	if pn := s.periodns.Load(); pn != s.oldPeriodns {
		s.setConstants(pn)
	}
	for i := range s.chans {
		ch := &s.chans[i]
		if scale := ch.scale.Get(); scale != ch.oldScale {
			ch.oldScale = scale
			if scale < 1e-20 && scale > -1e-20 {
				scale = 1.0
				ch.scale.Set(scale)
			}
			ch.scaleMult = 1.0 / scale
		}
		revSec := float64(ch.speed.Get() * ch.scaleMult)
		freq := float64(float64(revSec*float64(ch.ppr.Get())) * 4.0)
		if freq > s.maxf {
			freq = s.maxf
		} else if freq < -s.maxf {
			freq = -s.maxf
		}
		ch.addval.Store(cvttsd2si64(freq * s.freqscale))
	}
}

// cvttsd2si64 is C's (long) conversion of a double on x86-64: truncation
// toward zero, and 0x8000000000000000 for NaN or a value out of range.
func cvttsd2si64(f float64) int64 {
	if f >= -9223372036854775808.0 && f < 9223372036854775808.0 {
		return int64(f)
	}
	return math.MinInt64
}
