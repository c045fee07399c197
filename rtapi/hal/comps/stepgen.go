package comps

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// stepgen is stepgen(9), a port of LinuxCNC's stepgen.c: software step
// pulse generation for up to 16 channels, each of step type 0 (step/dir),
// 1 (up/down), 2 to 14 (quadrature and the three-, four- and five-phase
// patterns) or 15 (user_step_type's pattern), in position or velocity
// mode. It is loaded as
//
//	loadrt stepgen step_type=0,0,2 [ctrl_type=p,p,v] [user_step_type=1,3,2,0]
//
// and exports stepgen.make-pulses (integer only, for the base thread),
// stepgen.update-freq and stepgen.capture-position (the servo thread).
// Pins and parameters are stepgen.N.*, N from 0, as stepgen.c exports
// them. The fixed-point frequency generator is stepgen.c's: a 64-bit
// accumulator that update-freq's add value (steps per base period <<
// 28) drives; a step happens when bit 28 toggles. A typical chain, with
// LinuxCNC's names (an encoder reads the steps back through its
// phase-A and phase-B, as LinuxCNC's tests/counter-encoder.0 does):
//
//	loadrt threads name1=base period1=25000 name2=servo period2=1000000
//	loadrt stepgen step_type=2
//	loadrt encoder num_chan=1
//	net A stepgen.0.phase-A => encoder.0.phase-A
//	net B stepgen.0.phase-B => encoder.0.phase-B
//	addf stepgen.make-pulses base
//	addf encoder.update-counters base
//	addf stepgen.capture-position servo
//	addf encoder.capture-position servo
//	addf stepgen.update-freq servo
//
// docs/LINUXCNC.md lists every item against stepgen.c.
func init() { hal.Register("stepgen", loadStepgen) }

const (
	stepgenMaxChan  = 16 // MAX_CHAN
	stepgenMaxCycle = 18 // MAX_CYCLE: the most entries of user_step_type
	stepgenMaxType  = 15 // MAX_STEP_TYPE; type 15 runs user_step_type's table
	stepgenUserRow  = 13 // USER_STEP_TYPE: type 15's row in the tables
	stepgenPickoff  = 28 // PICKOFF: the accumulator bit that steps
)

// stepgenLUT is stepgen.c's master_lut: the output patterns of step
// types 2 to 15, phase A in bit 0. Row 13 (type 15) is user_step_type's.
var stepgenLUT = [14][stepgenMaxCycle]uint8{
	{1, 3, 2, 0, 0, 0, 0, 0, 0, 0},        // type 2: Quadrature
	{1, 2, 4, 0, 0, 0, 0, 0, 0, 0},        // type 3: Three Wire
	{1, 3, 2, 6, 4, 5, 0, 0, 0, 0},        // type 4: Three Wire Half Step
	{1, 2, 4, 8, 0, 0, 0, 0, 0, 0},        // 5: Unipolar Full Step 1
	{3, 6, 12, 9, 0, 0, 0, 0, 0, 0},       // 6: Unipolar Full Step 2
	{1, 7, 14, 8, 0, 0, 0, 0, 0, 0},       // 7: Bipolar Full Step 1
	{5, 6, 10, 9, 0, 0, 0, 0, 0, 0},       // 8: Bipolar Full Step 2
	{1, 3, 2, 6, 4, 12, 8, 9, 0, 0},       // 9: Unipolar Half Step
	{1, 5, 7, 6, 14, 10, 8, 9, 0, 0},      // 10: Bipolar Half Step
	{1, 2, 4, 8, 16, 0, 0, 0, 0, 0},       // 11: Five Wire Unipolar
	{3, 6, 12, 24, 17, 0, 0, 0, 0, 0},     // 12: Five Wire Wave
	{1, 3, 2, 6, 4, 12, 8, 24, 16, 17},    // 13: Five Wire Uni Half
	{3, 7, 6, 14, 12, 28, 24, 25, 17, 19}, // 14: Five Wire Wave Half
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0},        // 15: User-defined
}

// stepgenCycleLen and stepgenPhases are cycle_len_lut and
// num_phases_lut; entry 13 (type 15) comes from user_step_type.
var (
	stepgenCycleLen = [14]int{4, 3, 6, 4, 4, 4, 4, 8, 8, 5, 5, 10, 10, 0}
	stepgenPhases   = [14]int{2, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 0}
)

// stepgenComp is one loaded stepgen: stepgen.c's globals and its channels.
type stepgenComp struct {
	ch []stepgenChan

	// periodns is make-pulses' period, stored by it and read by
	// update-freq (stepgen.c's periodns).
	periodns atomic.Int64
	// The rest is update-freq's own.
	oldPeriodns int64
	periodfp    float64 // base period, s
	freqscale   float64 // Hz to add value
	accelscale  float64 // Hz/s to add value change per base period
	oldDtns     int64
	dt, recipDt float64 // update-freq's period, s, and its reciprocal
}

// stepgenChan is one channel, stepgen.c's stepgen_t. Fields that two
// functions share are atomic, as the functions may run in different
// threads; stepgen.c's own races (update-freq zeroing addval while
// make-pulses runs) are kept, made word-sized and atomic.
type stepgenChan struct {
	// make-pulses' own state.
	timer1, timer2, timer3 uint32 // ns until the pulse ends, dir may change, may step the other way
	holdDDS                bool
	currDir                int // -1, 0, 1
	state                  int // index in lut, types 2 and up

	// Written by make-pulses and update-freq.
	addval       atomic.Int64 // add value of the frequency generator
	accum        atomic.Int64 // fixed point position, 28 fractional bits
	targetAddval atomic.Int64
	deltalim     atomic.Int64 // largest change of addval per base period, 0: none

	rawcount                      hal.S32
	enable                        hal.Bit
	stepLen, dirHoldDly, dirSetup hal.U32 // dirSetup: type 0 only
	stepType, cycleMax, numPhases int
	phase                         [5]hal.Bit
	lut                           [stepgenMaxCycle]uint8

	// update-freq's and capture-position's.
	posMode                    bool
	stepSpace                  hal.U32 // types 0 and 1 only
	oldPosCmd                  float64
	count                      hal.S32
	posScale                   hal.Float
	oldScale, scaleRecip       atomic.Uint64 // float64 bits; capture-position writes them too
	velCmd, posCmd, posFb      hal.Float
	freq, maxvel, maxaccel     hal.Float
	oldStepLen, oldStepSpace   uint32
	oldDirHoldDly, oldDirSetup uint32
}

// getStepSpace and getDirSetup read stepspace and dirsetup, 0 for step
// types that do not export them (stepgen.c's hal_param_new_fake).
func (c *stepgenChan) getStepSpace() uint32 {
	if c.stepType < 2 {
		return c.stepSpace.Get()
	}
	return 0
}

func (c *stepgenChan) setStepSpace(v uint32) {
	if c.stepType < 2 {
		c.stepSpace.Set(v)
	}
}

func (c *stepgenChan) getDirSetup() uint32 {
	if c.stepType == 0 {
		return c.dirSetup.Get()
	}
	return 0
}

func (c *stepgenChan) setDirSetup(v uint32) {
	if c.stepType == 0 {
		c.dirSetup.Set(v)
	}
}

// export is export_stepgen: channel num's pins and parameters, in
// stepgen.c's order, and its initial state.
func (c *stepgenChan) export(comp *hal.Component, num, stepType int, posMode bool, cfg *stepgenConfig) {
	p := fmt.Sprintf("stepgen.%d.", num)
	c.rawcount = comp.S32Param(p+"rawcounts", hal.RO)
	c.count = comp.S32(p+"counts", hal.Out)
	c.posScale = comp.FloatParam(p+"position-scale", hal.RW)
	c.posScale.Set(1.0)
	if posMode {
		c.posCmd = comp.Float(p+"position-cmd", hal.In)
	} else {
		c.velCmd = comp.Float(p+"velocity-cmd", hal.In)
	}
	c.enable = comp.Bit(p+"enable", hal.In)
	c.posFb = comp.Float(p+"position-fb", hal.Out)
	c.freq = comp.FloatParam(p+"frequency", hal.RO)
	c.maxvel = comp.FloatParam(p+"maxvel", hal.RW)
	c.maxaccel = comp.FloatParam(p+"maxaccel", hal.RW)
	c.stepLen = comp.U32Param(p+"steplen", hal.RW)
	c.stepLen.Set(1)
	if stepType < 2 {
		c.stepSpace = comp.U32Param(p+"stepspace", hal.RW)
		c.stepSpace.Set(1)
	}
	if stepType == 0 {
		c.dirSetup = comp.U32Param(p+"dirsetup", hal.RW)
		c.dirSetup.Set(1)
		c.dirHoldDly = comp.U32Param(p+"dirhold", hal.RW)
	} else {
		c.dirHoldDly = comp.U32Param(p+"dirdelay", hal.RW)
	}
	c.dirHoldDly.Set(1)
	switch stepType {
	case 0:
		c.phase[0] = comp.Bit(p+"step", hal.Out)
		c.phase[1] = comp.Bit(p+"dir", hal.Out)
	case 1:
		c.phase[0] = comp.Bit(p+"up", hal.Out)
		c.phase[1] = comp.Bit(p+"down", hal.Out)
	default:
		c.numPhases = cfg.phases[stepType-2]
		for n := 0; n < c.numPhases; n++ {
			c.phase[n] = comp.Bit(fmt.Sprintf("%sphase-%c", p, 'A'+n), hal.Out)
		}
		c.cycleMax = cfg.cycleLen[stepType-2] - 1
		c.lut = cfg.lut[stepType-2]
	}
	c.stepType = stepType
	c.posMode = posMode
	// old values that make update-freq validate the timing parameters
	c.oldStepLen, c.oldStepSpace, c.oldDirHoldDly, c.oldDirSetup = ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)
	// the accumulator gets a half step offset, so it steps half way
	// between integer positions
	c.accum.Store(1 << (stepgenPickoff - 1))
}

// makePulses is make_pulses, stepgen.make-pulses: for each channel it
// counts the timers down by a period, ramps the add value toward the
// target by at most deltalim (holding the generator while a reversal
// must wait for dirhold and dirsetup), adds it to the accumulator, and
// starts a step when bit 28 toggles; then it writes the outputs. It
// allocates nothing and uses no floating point.
// RT-safe.
func (s *stepgenComp) makePulses(period time.Duration, _ int64) {
	periodns := int64(period)
	s.periodns.Store(periodns)
	for i := range s.ch {
		c := &s.ch[i]
		// decrement the timing constraint timers
		if c.timer1 > 0 {
			if int64(c.timer1) > periodns {
				c.timer1 = uint32(int64(c.timer1) - periodns)
			} else {
				c.timer1 = 0
			}
		}
		if c.timer2 > 0 {
			if int64(c.timer2) > periodns {
				c.timer2 = uint32(int64(c.timer2) - periodns)
			} else {
				c.timer2 = 0
			}
		}
		if c.timer3 > 0 {
			if int64(c.timer3) > periodns {
				c.timer3 = uint32(int64(c.timer3) - periodns)
			} else {
				c.timer3 = 0
				// last timer timed out, cancel hold
				c.holdDDS = false
			}
		}
		enable := c.enable.Get()
		var stepNow int64
		if !c.holdDDS && enable {
			// update addval (ramping)
			oldAddval := c.addval.Load()
			target := c.targetAddval.Load()
			newAddval := target
			if lim := c.deltalim.Load(); lim != 0 {
				if target > oldAddval+lim {
					newAddval = oldAddval + lim
				} else if target < oldAddval-lim {
					newAddval = oldAddval - lim
				}
			}
			c.addval.Store(newAddval)
			// a reversal waits until the delays time out
			if (newAddval >= 0 && oldAddval < 0) || (newAddval < 0 && oldAddval >= 0) {
				if c.timer3 != 0 {
					c.holdDDS = true
				}
			}
			if !c.holdDDS {
				// update the DDS; a step when the pickoff bit changes
				accum := c.accum.Load()
				next := accum + newAddval
				c.accum.Store(next)
				stepNow = (accum ^ next) & (1 << stepgenPickoff)
				c.rawcount.Set(int32(next >> stepgenPickoff))
			}
		}
		if c.timer2 == 0 {
			// update direction; not when addval is 0
			if a := c.addval.Load(); a > 0 {
				c.currDir = 1
			} else if a < 0 {
				c.currDir = -1
			}
		}
		if stepNow != 0 {
			// (re)start the timers: end of pulse, dir change, reversal
			c.timer1 = c.stepLen.Get()
			c.timer2 = c.timer1 + c.dirHoldDly.Get()
			c.timer3 = c.timer2 + c.getDirSetup()
			if c.stepType >= 2 {
				c.state += c.currDir
				if c.state < 0 {
					c.state = c.cycleMax
				} else if c.state > c.cycleMax {
					c.state = 0
				}
			}
		}
		switch c.stepType {
		case 0:
			c.phase[0].Set(c.timer1 != 0)
			c.phase[1].Set(c.currDir < 0)
		case 1:
			up, down := false, false
			if c.timer1 != 0 {
				if c.currDir < 0 {
					down = true
				} else {
					up = true
				}
			}
			c.phase[0].Set(up)
			c.phase[1].Set(down)
		default:
			if c.numPhases == 0 {
				// type 15 without user_step_type: no pins, and state
				// may be -1 (stepgen.c reads outside its table here)
				break
			}
			bits := c.lut[c.state]
			for p := 0; p < c.numPhases; p++ {
				c.phase[p].Set(bits&1 != 0)
				bits >>= 1
			}
		}
	}
}

// capturePosition is update_pos, stepgen.capture-position: counts =
// accumulator >> 28, position-fb = (accumulator - half a step) /
// 2^28 / position-scale; a position-scale within ±1e-20 is set to 1.
// RT-safe.
func (s *stepgenComp) capturePosition(time.Duration, int64) {
	for i := range s.ch {
		c := &s.ch[i]
		accum := c.accum.Load()
		c.count.Set(int32(accum >> stepgenPickoff))
		c.checkScale()
		c.posFb.Set(float64(float64(accum-1<<(stepgenPickoff-1)) * math.Float64frombits(c.scaleRecip.Load())))
	}
}

// checkScale validates a changed position-scale and recomputes its
// reciprocal (update_pos and update_freq); it returns the scale.
func (c *stepgenChan) checkScale() float64 {
	scale := c.posScale.Get()
	if scale != math.Float64frombits(c.oldScale.Load()) {
		c.oldScale.Store(math.Float64bits(scale))
		if scale < 1e-20 && scale > -1e-20 {
			// too small: divide by zero is a bad thing
			scale = 1.0
			c.posScale.Set(scale)
		}
		c.scaleRecip.Store(math.Float64bits((1.0 / float64(int64(1)<<stepgenPickoff)) / scale))
	}
	return scale
}

// ulceil is stepgen.c's ulceil: the least multiple of increment that is
// at least value, in unsigned long arithmetic.
func ulceil(value, increment uint64) uint64 {
	if value == 0 {
		return 0
	}
	return increment * ((value-1)/increment + 1)
}

// updateFreq is update_freq, stepgen.update-freq: it rounds the timing
// parameters up to whole base periods, limits maxvel to 1 / (steplen +
// stepspace) steps per second and maxaccel to maxvel per update-freq
// period, and computes each enabled channel's frequency: in velocity
// mode velocity-cmd ramped at maxaccel; in position mode stepgen.c's
// velocity-matching position loop. A disabled channel gets frequency 0.
// The base period is make-pulses' latest, 50 µs before its first run.
// RT-safe.
func (s *stepgenComp) updateFreq(period time.Duration, _ int64) {
	newperiod := false
	if periodns := s.periodns.Load(); periodns != s.oldPeriodns {
		s.oldPeriodns = periodns
		s.periodfp = float64(periodns) * 0.000000001
		s.freqscale = float64(int64(1)<<stepgenPickoff) * s.periodfp
		s.accelscale = float64(s.freqscale * s.periodfp)
		newperiod = true
	}
	if p := int64(period); p != s.oldDtns {
		s.oldDtns = p
		s.dt = float64(p) * 0.000000001
		s.recipDt = 1.0 / s.dt
	}
	periodns := uint64(s.oldPeriodns)
	dt, recipDt := s.dt, s.recipDt
	for i := range s.ch {
		c := &s.ch[i]
		posScale := c.checkScale()
		if newperiod {
			c.oldStepLen, c.oldStepSpace, c.oldDirHoldDly, c.oldDirSetup = ^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)
		}
		// timing parameters: whole base periods
		if v := c.stepLen.Get(); v != c.oldStepLen {
			if v == 0 {
				v = 1 // must be non-zero
			}
			c.oldStepLen = uint32(ulceil(uint64(v), periodns))
			c.stepLen.Set(c.oldStepLen)
		}
		if v := c.getStepSpace(); v != c.oldStepSpace {
			c.oldStepSpace = uint32(ulceil(uint64(v), periodns))
			c.setStepSpace(c.oldStepSpace)
		}
		if v := c.getDirSetup(); v != c.oldDirSetup {
			c.oldDirSetup = uint32(ulceil(uint64(v), periodns))
			c.setDirSetup(c.oldDirSetup)
		}
		if v := c.dirHoldDly.Get(); v != c.oldDirHoldDly {
			if v+c.getDirSetup() == 0 && c.stepType < 2 {
				v = 1 // dirdelay must be non-zero for types 0 and 1
			}
			c.oldDirHoldDly = uint32(ulceil(uint64(v), periodns))
			c.dirHoldDly.Set(c.oldDirHoldDly)
		}
		if !c.enable.Get() {
			// disabled: keep following the position command
			if c.posMode {
				c.oldPosCmd = float64(c.posCmd.Get() * posScale)
			}
			c.freq.Set(0)
			c.addval.Store(0)
			c.targetAddval.Store(0)
			continue
		}
		// frequency limit
		minStepPeriod := int64(c.stepLen.Get() + c.getStepSpace()) // u32 sum, as in C
		maxFreq := 1.0 / float64(float64(minStepPeriod)*0.000000001)
		absScale := math.Abs(posScale)
		if maxvel := c.maxvel.Get(); maxvel <= 0.0 {
			c.maxvel.Set(0.0)
		} else {
			desired := float64(maxvel * absScale)
			if desired > maxFreq {
				// too high: stepgen.c prints it once (gortapi does not:
				// no logging on the real-time path) and limits it
				c.maxvel.Set(maxFreq / absScale)
			} else {
				maxFreq = desired
			}
		}
		// the accel limit at most: zero to full speed in one period
		maxAc := float64(maxFreq * recipDt)
		if maxaccel := c.maxaccel.Get(); maxaccel <= 0.0 {
			c.maxaccel.Set(0.0)
		} else if float64(maxaccel*absScale) > maxAc {
			c.maxaccel.Set(maxAc / absScale)
		} else {
			maxAc = float64(maxaccel * absScale)
		}
		var newVel float64
		if c.posMode {
			newVel = c.positionLoop(posScale, maxFreq, maxAc, dt, recipDt)
		} else {
			velCmd := float64(c.velCmd.Get() * posScale)
			if velCmd > maxFreq {
				velCmd = maxFreq
			} else if velCmd < -maxFreq {
				velCmd = -maxFreq
			}
			dv := float64(maxAc * dt)
			freq := c.freq.Get()
			if velCmd > freq+dv {
				newVel = freq + dv
			} else if velCmd < freq-dv {
				newVel = freq - dv
			} else {
				newVel = velCmd
			}
		}
		c.freq.Set(newVel)
		c.targetAddval.Store(int64(float64(c.freq.Get() * s.freqscale)))
		c.deltalim.Store(int64(float64(maxAc * s.accelscale)))
	}
}

// positionLoop is update_freq's position mode: the frequency (steps/s)
// that brings the accumulator onto position-cmd, ramping at maxAc and
// at most maxFreq. Every product is rounded on its own, as on x86-64.
func (c *stepgenChan) positionLoop(posScale, maxFreq, maxAc, dt, recipDt float64) float64 {
	// position command in counts, velocity command in counts/s
	posCmd := float64(c.posCmd.Get() * posScale)
	velCmd := float64((posCmd - c.oldPosCmd) * recipDt)
	c.oldPosCmd = posCmd
	// from fixed point, less the half step offset
	currPos := float64(float64(c.accum.Load()-1<<(stepgenPickoff-1)) * (1.0 / float64(int64(1)<<stepgenPickoff)))
	currVel := c.freq.Get()
	// which way to ramp to match velocity, and how long that takes
	matchAc := -maxAc
	if velCmd > currVel {
		matchAc = maxAc
	}
	matchTime := (velCmd - currVel) / matchAc
	avgV := float64((velCmd + currVel) * 0.5)
	estOut := currPos + float64(avgV*matchTime)
	estCmd := posCmd + float64(velCmd*(matchTime-float64(1.5*dt)))
	estErr := estOut - estCmd
	var newVel float64
	if matchTime < dt {
		// velocity can be matched in one period
		if math.Abs(estErr) < 0.0001 {
			newVel = velCmd
		} else {
			// correct the position error, within the accel limit
			newVel = velCmd - float64(float64(0.5*estErr)*recipDt)
			if newVel > currVel+float64(maxAc*dt) {
				newVel = currVel + float64(maxAc*dt)
			} else if newVel < currVel-float64(maxAc*dt) {
				newVel = currVel - float64(maxAc*dt)
			}
		}
	} else {
		// the change of final position if we ramp the other way for
		// one period decides the way to ramp
		dv := float64(float64(-2.0*matchAc) * dt)
		dp := float64(dv * matchTime)
		if math.Abs(estErr+float64(dp*2.0)) < math.Abs(estErr) {
			matchAc = -matchAc
		}
		newVel = currVel + float64(matchAc*dt)
	}
	if newVel > maxFreq {
		newVel = maxFreq
	} else if newVel < -maxFreq {
		newVel = -maxFreq
	}
	return newVel
}
