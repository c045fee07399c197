package comps

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
)

func init() { hal.Register("pwmgen", loadPwmgen) }

// pwmgenMaxChan is pwmgen.c's MAX_CHAN: output_type= takes 8 items.
const pwmgenMaxChan = 8

// loadPwmgen is pwmgen.c's rtapi_app_main: output_type=T0,T1,... makes
// one channel per leading item other than -1, each 0 (pwm), 1 (pwm/dir)
// or 2 (up/down). Another type, or no channel, is ErrInvalid.
func loadPwmgen(h *hal.HAL, a *hal.LoadArgs) error {
	types := [pwmgenMaxChan]int32{-1, -1, -1, -1, -1, -1, -1, -1}
	if err := mpIntArray(a, "output_type", types[:]); err != nil {
		return err
	}
	n := 0
	for ; n < pwmgenMaxChan && types[n] != -1; n++ {
		if types[n] > 2 || types[n] < 0 {
			return fmt.Errorf("loadrt pwmgen: bad output type '%d', channel %d: %w", types[n], n, rtapi.ErrInvalid)
		}
	}
	if n == 0 {
		return fmt.Errorf("loadrt pwmgen: no channels configured (give output_type=): %w", rtapi.ErrInvalid)
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	newPwmgen(c, types[:n])
	return c.Ready()
}

// pwmgen.c's pwm_mode values.
const (
	pwmDisabled uint32 = iota
	pwmPure
	pwmDither
	pwmPDM
)

// pwmgenChan is pwmgen.c's pwmgen_t: times in ns, as C longs. What
// update (servo thread) writes and make-pulses (base thread) reads is
// atomic: period, highTime, pwmMode and direction.
type pwmgenChan struct {
	period, highTime       atomic.Int64
	periodTimer, highTimer int64
	currOutput             bool
	outputType             int32
	pwmMode                atomic.Uint32 // pwmDisabled ... pwmPDM
	direction              atomic.Bool
	out0, out1             hal.Bit // pwm and dir, or up and down
	enable                 hal.Bit
	value, scale, offset   hal.Float
	oldScale, scaleRecip   float64
	pwmFreq                hal.Float
	oldPwmFreq             float64
	periods                int32
	periodsRecip           float64
	ditherPwm              hal.Bit
	minDc, maxDc, currDc   hal.Float
}

// pwmgen (pwmgen(9)) is a port of LinuxCNC's pwmgen.c: make-pulses, in
// the base thread, drives the outputs from an integer accumulator of
// nanoseconds; update, in the servo thread, turns value into a high time
// per PWM period. periodns is the last make-pulses period, -1 before
// the first (atomic: make-pulses writes it, update reads it);
// oldPeriodns is update's static (one for all channels).
type pwmgen struct {
	ch          []pwmgenChan
	periodns    atomic.Int64
	oldPeriodns int64
}

// newPwmgen makes the channels pwmgen.N with pwmgen.c's pins and
// defaults, and exports pwmgen.make-pulses and pwmgen.update.
func newPwmgen(c *hal.Component, types []int32) *pwmgen {
	g := &pwmgen{ch: make([]pwmgenChan, len(types)), oldPeriodns: -1}
	g.periodns.Store(-1)
	for n, t := range types {
		p := fmt.Sprintf("pwmgen.%d", n)
		ch := &g.ch[n]
		ch.scale = c.Float(p+".scale", hal.IO)
		ch.offset = c.Float(p+".offset", hal.IO)
		ch.ditherPwm = c.Bit(p+".dither-pwm", hal.IO)
		ch.pwmFreq = c.Float(p+".pwm-freq", hal.IO)
		ch.minDc = c.Float(p+".min-dc", hal.IO)
		ch.maxDc = c.Float(p+".max-dc", hal.IO)
		ch.currDc = c.Float(p+".curr-dc", hal.Out)
		ch.enable = c.Bit(p+".enable", hal.In)
		ch.value = c.Float(p+".value", hal.In)
		if t == 2 {
			ch.out0 = c.Bit(p+".up", hal.Out)
			ch.out1 = c.Bit(p+".down", hal.Out)
		} else {
			ch.out0 = c.Bit(p+".pwm", hal.Out)
			if t == 1 {
				ch.out1 = c.Bit(p+".dir", hal.Out)
			}
		}
		ch.scale.Set(1.0)
		ch.maxDc.Set(1.0)
		ch.period.Store(50000)
		ch.outputType = t
		ch.pwmMode.Store(pwmDisabled)
		ch.oldScale = ch.scale.Get() + 1.0
		ch.oldPwmFreq = -1
	}
	c.Export("pwmgen.make-pulses", g.makePulses)
	c.Export("pwmgen.update", g.update)
	return g
}

// makePulses is pwmgen.c's make_pulses: it stores period for update and
// steps each channel's timers by it.
// RT-safe.
func (g *pwmgen) makePulses(period time.Duration, _ int64) {
	periodns := int64(period)
	g.periodns.Store(periodns)
	for i := range g.ch {
		ch := &g.ch[i]
		chPeriod, highTime := ch.period.Load(), ch.highTime.Load()
		switch ch.pwmMode.Load() {
		case pwmPure:
			if ch.currOutput {
				ch.highTimer += periodns
				if ch.highTimer >= highTime {
					ch.currOutput = false
				}
			}
			ch.periodTimer += periodns
			if ch.periodTimer >= chPeriod {
				ch.periodTimer = 0
				ch.highTimer = 0
				if highTime > 0 {
					ch.currOutput = true
				}
			}
		case pwmDither:
			if ch.currOutput {
				ch.highTimer -= periodns
				if ch.highTimer <= 0 {
					ch.currOutput = false
				}
			}
			ch.periodTimer += periodns
			if ch.periodTimer >= chPeriod {
				ch.periodTimer -= chPeriod
				ch.highTimer += highTime
				if ch.highTimer > 0 {
					ch.currOutput = true
				}
			}
		case pwmPDM:
			ch.highTimer += highTime
			if ch.currOutput {
				ch.highTimer -= periodns
			}
			ch.currOutput = ch.highTimer > 0
		default:
			ch.currOutput = false
			ch.highTimer = 0
			ch.periodTimer = 0
		}
		if ch.outputType < 2 {
			ch.out0.Set(ch.currOutput)
		} else {
			dir := ch.direction.Load()
			ch.out0.Set(ch.currOutput && !dir)
			ch.out1.Set(ch.currOutput && dir)
		}
	}
}

// update is pwmgen.c's update: it validates the limits, scale and
// frequency (writing corrected values back to their pins), recomputes
// the period when the mode, pwm-freq or the make-pulses period changed,
// and sets the high time and curr-dc from value. Float-to-integer
// conversions truncate, as C's do.
// RT-safe.
func (g *pwmgen) update(time.Duration, int64) {
	periodns := g.periodns.Load()
	for i := range g.ch {
		ch := &g.ch[i]
		maxDc, minDc := ch.maxDc.Get(), ch.minDc.Get()
		if maxDc > 1.0 {
			maxDc = 1.0
			ch.maxDc.Set(maxDc)
		}
		if minDc > maxDc {
			minDc = maxDc
			ch.minDc.Set(minDc)
		}
		if minDc < 0.0 {
			minDc = 0.0
			ch.minDc.Set(minDc)
		}
		if maxDc < minDc {
			maxDc = minDc
			ch.maxDc.Set(maxDc)
		}
		if scale := ch.scale.Get(); scale != ch.oldScale {
			ch.oldScale = scale
			if scale < 1e-20 && scale > -1e-20 {
				scale = 1.0
				ch.scale.Set(scale)
			}
			ch.scaleRecip = 1.0 / scale
		}
		var newMode uint32
		switch {
		case !ch.enable.Get():
			newMode = pwmDisabled
		case ch.pwmFreq.Get() == 0:
			newMode = pwmPDM
		case ch.ditherPwm.Get():
			newMode = pwmDither
		default:
			newMode = pwmPure
		}
		if ch.pwmFreq.Get() != ch.oldPwmFreq {
			ch.pwmMode.Store(pwmDisabled)
		}
		if ch.pwmMode.Load() != newMode || periodns != g.oldPeriodns {
			ch.pwmMode.Store(pwmDisabled)
			if ch.pwmFreq.Get() <= 0.0 {
				ch.pwmFreq.Set(0.0)
				ch.period.Store(periodns)
			} else {
				if ch.pwmFreq.Get() < 0.5 {
					ch.pwmFreq.Set(0.5)
				} else if lim := (1e9 / 2.0) / float64(periodns); ch.pwmFreq.Get() > lim {
					ch.pwmFreq.Set(lim)
				}
				if newMode == pwmPure {
					ch.periods = int32((1e9/ch.pwmFreq.Get())/float64(periodns) + 0.5)
					ch.periodsRecip = 1.0 / float64(ch.periods)
					ch.period.Store(int64(ch.periods) * periodns)
					ch.pwmFreq.Set(1.0e9 / float64(ch.period.Load()))
				} else {
					ch.period.Store(int64(1.0e9 / ch.pwmFreq.Get()))
				}
			}
			ch.oldPwmFreq = ch.pwmFreq.Get()
		}
		tmpdc := float64(ch.value.Get()*ch.scaleRecip) + ch.offset.Get()
		if ch.outputType == 0 && tmpdc < 0.0 {
			tmpdc = 0.0
		}
		var outdc float64
		if tmpdc >= 0.0 {
			if tmpdc > maxDc {
				tmpdc = maxDc
			} else if tmpdc < minDc {
				tmpdc = minDc
			}
			ch.direction.Store(false)
			outdc = tmpdc
		} else {
			if tmpdc < -maxDc {
				tmpdc = -maxDc
			} else if tmpdc > -minDc {
				tmpdc = -minDc
			}
			ch.direction.Store(true)
			outdc = -tmpdc
		}
		if newMode == pwmPure {
			highPeriods := int32(float64(float64(ch.periods)*outdc) + 0.5)
			ch.highTime.Store(int64(highPeriods) * periodns)
			if tmpdc >= 0 {
				ch.currDc.Set(float64(highPeriods) * ch.periodsRecip)
			} else {
				ch.currDc.Set(float64(-highPeriods) * ch.periodsRecip)
			}
		} else {
			ch.highTime.Store(int64(float64(float64(ch.period.Load())*outdc) + 0.5))
			ch.currDc.Set(tmpdc)
		}
		if ch.outputType == 1 {
			ch.out1.Set(ch.direction.Load())
		}
		ch.pwmMode.Store(newMode)
	}
	g.oldPeriodns = periodns
}
