// Package comps registers gortapi's standard HAL components with
// LinuxCNC's names and LinuxCNC's behaviour: each is a port of its
// LinuxCNC source (src/hal/components/NAME.c or NAME.comp), with the same
// pins, parameters, defaults, functions and formulas, computed in the
// same order; docs/LINUXCNC.md lists every item and the few differences.
// Import it for its side effect:
//
//	import _ "github.com/gortapi/gortapi/rtapi/hal/comps"
//
// and load them with loadrt in a .hal file or HAL.LoadRT:
//
//	threads   [name1=thread1] [period1=1000000] [fp1=1] [name2= period2= ...]
//	siggen    square, sawtooth, triangle, sine, cosine and clock outputs
//	scale     out = in * gain + offset
//	sum2      out = in0 * gain0 + in1 * gain1 + offset
//	mux2      out = sel ? in1 : in0
//	and2, or2, not
//	limit3    position, velocity and acceleration limiter
//	ddt       out = (in - previous in) / period
//	lowpass   out += (in - out) * gain
//	pid       pid.N.do-pid-calcs: LinuxCNC's PID with feed-forward and
//	          its relay auto-tuner
//	sim_motor a simulated servo axis: velocity lag and an encoder
//	          (gortapi's own, no LinuxCNC twin)
//	sampler   cfg=ffb depth=4000: captures pins every cycle into a
//	          shared-memory ring for examples/halsampler (package sampler)
//
// The base thread's components, each with its base-thread and servo-thread
// functions:
//
//	stepgen     step_type=0,0,2 ctrl_type=p,v: step/dir, up/down,
//	            quadrature and table step types; stepgen.make-pulses,
//	            stepgen.update-freq, stepgen.capture-position
//	encoder     num_chan=3: quadrature x4/x1, counter mode, index, latch,
//	            velocity; encoder.update-counters, encoder.capture-position
//	sim_encoder num_chan=1: phase-A/B/Z of a turning encoder
//	pwmgen      output_type=0,1,2: pwm, pwm/dir, up/down;
//	            pwmgen.make-pulses, pwmgen.update
//
// Logic, timing, math and conversion: estop_latch, debounce (cfg=),
// charge_pump, oneshot, flipflop, edge, toggle, timedelay, logic
// (personality=), updown, hypot, wcomp, comp, abs, near, limit2, mult2,
// mux4, select8, match8, tristate_float, and every conv_IN_OUT LinuxCNC
// builds (conv_s32_float, conv_float_s32, ...).
//
// The halcompile components (scale, sum2, mux2, and2, or2, not, limit3,
// ddt, lowpass) take count=N or names=a,b; pid and siggen take
// num_chan=N (or count=N) or names=a,b, at most 16. Pins are named
// NAME.N.pin (or a.pin); a lone function is named as the instance
// (scale.0), as halcompile names "function _". Every function is RT-safe.
package comps

import (
	"fmt"
	"math"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

func init() {
	hal.Register("threads", loadThreads)
	hal.Register("siggen", loadSiggen)
	hal.Register("scale", instances(1, newScale))
	hal.Register("sum2", instances(1, newSum2))
	hal.Register("mux2", instances(1, newMux2))
	hal.Register("and2", instances(1, newAnd2))
	hal.Register("or2", instances(1, newOr2))
	hal.Register("not", instances(1, newNot))
	hal.Register("limit3", instances(1, newLimit3))
	hal.Register("ddt", instances(1, newDdt))
	hal.Register("lowpass", instances(1, newLowpass))
	hal.Register("pid", loadPID)
	hal.Register("sim_motor", instances(1, newSimMotor))
	hal.Register("sampler", sampler.Load)
}

// instances makes the factory of a halcompile component: one instance per
// name of count= or names=. halcompile takes no num_chan=.
func instances(def int, inst func(c *hal.Component, p string)) hal.Factory {
	return func(h *hal.HAL, a *hal.LoadArgs) error {
		if _, ok := a.Get("num_chan"); ok {
			return fmt.Errorf("loadrt %s: unknown argument \"num_chan\" (take count= or names=): %w", a.Name, rtapi.ErrInvalid)
		}
		names, err := a.Instances(def)
		if err != nil {
			return err
		}
		c, err := h.NewComponent(a.Name)
		if err != nil {
			return err
		}
		for _, n := range names {
			inst(c, n)
		}
		return c.Ready()
	}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// The halcompile components below are their .comp files' FUNCTION(_),
// with float64() around products so that no architecture fuses them into
// an FMA (see pid).

// scale (scale.comp): out = in * gain + offset; gain and offset are pins,
// both 0 by default.
func newScale(c *hal.Component, p string) {
	in, gain, offset := c.Float(p+".in", hal.In), c.Float(p+".gain", hal.In), c.Float(p+".offset", hal.In)
	out := c.Float(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(float64(in.Get()*gain.Get()) + offset.Get()) })
}

// sum2 (sum2.comp): out = in0 * gain0 + in1 * gain1 + offset; gain0,
// gain1 (1 by default) and offset are parameters.
func newSum2(c *hal.Component, p string) {
	in0, in1 := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In)
	gain0, gain1 := c.FloatParam(p+".gain0", hal.RW), c.FloatParam(p+".gain1", hal.RW)
	offset := c.FloatParam(p+".offset", hal.RW)
	out := c.Float(p+".out", hal.Out)
	gain0.Set(1)
	gain1.Set(1)
	c.Export(p, func(time.Duration, int64) {
		out.Set(float64(in0.Get()*gain0.Get()) + float64(in1.Get()*gain1.Get()) + offset.Get())
	})
}

// mux2 (mux2.comp): out follows in1 when sel is true, else in0.
func newMux2(c *hal.Component, p string) {
	sel, out := c.Bit(p+".sel", hal.In), c.Float(p+".out", hal.Out)
	in1, in0 := c.Float(p+".in1", hal.In), c.Float(p+".in0", hal.In)
	c.Export(p, func(time.Duration, int64) {
		if sel.Get() {
			out.Set(in1.Get())
		} else {
			out.Set(in0.Get())
		}
	})
}

// and2 (and2.comp): out = in0 && in1.
func newAnd2(c *hal.Component, p string) {
	in0, in1, out := c.Bit(p+".in0", hal.In), c.Bit(p+".in1", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(in0.Get() && in1.Get()) })
}

// or2 (or2.comp): out = in0 || in1.
func newOr2(c *hal.Component, p string) {
	in0, in1, out := c.Bit(p+".in0", hal.In), c.Bit(p+".in1", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(in0.Get() || in1.Get()) })
}

// not (not.comp): out = !in.
func newNot(c *hal.Component, p string) {
	in, out := c.Bit(p+".in", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(!in.Get()) })
}

// ddt (ddt.comp): out = (in - previous in) / (period * 1e-9); the
// previous in starts at 0.
func newDdt(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	var old float64
	c.Export(p, func(period time.Duration, _ int64) {
		tmp := in.Get()
		out.Set((tmp - old) / (float64(period) * 1e-9))
		old = tmp
	})
}

// lowpass (lowpass.comp): out += (in - out) * gain, gain a parameter (0
// by default); load sets out = in.
func newLowpass(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	load, gain := c.Bit(p+".load", hal.In), c.FloatParam(p+".gain", hal.RW)
	c.Export(p, func(time.Duration, int64) {
		if load.Get() {
			out.Set(in.Get())
			return
		}
		val := out.Get()
		out.Set(val + float64((in.Get()-val)*gain.Get()))
	})
}

// sim_motor: a simulated servo axis. Its velocity follows command * gain
// (0 when not enabled) with a first-order lag of time-constant seconds;
// position integrates it. counts = floor(position * counts-per-unit) and
// position-fb = counts / counts-per-unit (with counts-per-unit 0: counts
// 0, position-fb exact). Function sim_motor.N.update.
func newSimMotor(c *hal.Component, p string) {
	command, enable := c.Float(p+".command", hal.In), c.Bit(p+".enable", hal.In)
	gain, tau := c.Float(p+".gain", hal.In), c.Float(p+".time-constant", hal.In)
	cpu := c.Float(p+".counts-per-unit", hal.In)
	position, velocity := c.Float(p+".position", hal.Out), c.Float(p+".velocity", hal.Out)
	fb, counts := c.Float(p+".position-fb", hal.Out), c.S64(p+".counts", hal.Out)
	gain.Set(1)
	tau.Set(0.01)
	cpu.Set(1000)
	var pos, vel float64
	c.Export(p+".update", func(period time.Duration, _ int64) {
		dt := period.Seconds()
		target := 0.0
		if enable.Get() {
			target = command.Get() * gain.Get()
		}
		if t := tau.Get(); t > 0 {
			vel += (target - vel) * -math.Expm1(-dt/t)
		} else {
			vel = target
		}
		pos += vel * dt
		position.Set(pos)
		velocity.Set(vel)
		if k := cpu.Get(); k != 0 {
			n := clamp(math.Floor(pos*k), math.MinInt64/2, math.MaxInt64/2)
			counts.Set(int64(n))
			fb.Set(n / k)
		} else {
			counts.Set(0)
			fb.Set(pos)
		}
	})
}
