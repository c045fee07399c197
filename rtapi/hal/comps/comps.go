// Package comps registers gortapi's standard HAL components, with
// LinuxCNC's names, pins, parameters, functions and formulas (from each
// component's man page, section 9). Import it for its side effect:
//
//	import _ "github.com/gortapi/gortapi/rtapi/hal/comps"
//
// and load them with loadrt in a .hal file or HAL.LoadRT:
//
//	threads   name1=servo period1=1000000 [name2=base period2=50000 ...]
//	siggen    square, sawtooth, triangle, sine, cosine and clock outputs
//	scale     out = in * gain + offset
//	sum2      out = in0 * gain0 + in1 * gain1 + offset
//	mux2      out = sel ? in1 : in0
//	and2, or2, not
//	limit3    position, velocity and acceleration limiter
//	ddt       out = (in - previous in) / period
//	lowpass   out += (in - out) * gain
//	pid       pid.N.do-pid-calcs: LinuxCNC's PID with feed-forward
//	sim_motor a simulated servo axis: velocity lag and an encoder
//	sampler   cfg=ffb depth=4000: captures pins every cycle into a
//	          shared-memory ring for examples/halsampler (package sampler)
//
// Each takes count=N or names=a,b (pid also num_chan=N) and names its pins
// NAME.N.pin (or a.pin); a lone function is named as the instance
// (scale.0), as halcompile names "function _". Every function is RT-safe.
package comps

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
)

func init() {
	hal.Register("threads", loadThreads)
	hal.Register("siggen", instances(1, newSiggen))
	hal.Register("scale", instances(1, newScale))
	hal.Register("sum2", instances(1, newSum2))
	hal.Register("mux2", instances(1, newMux2))
	hal.Register("and2", instances(1, newAnd2))
	hal.Register("or2", instances(1, newOr2))
	hal.Register("not", instances(1, newNot))
	hal.Register("limit3", instances(1, newLimit3))
	hal.Register("ddt", instances(1, newDdt))
	hal.Register("lowpass", instances(1, newLowpass))
	hal.Register("pid", instances(3, newPID))
	hal.Register("sim_motor", instances(1, newSimMotor))
	hal.Register("sampler", sampler.Load)
}

// instances makes a factory of one component with one instance per name.
func instances(def int, inst func(c *hal.Component, p string)) hal.Factory {
	return func(h *hal.HAL, a *hal.LoadArgs) error {
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

// loadThreads makes up to three threads (nameN= periodN=), fastest first.
func loadThreads(h *hal.HAL, a *hal.LoadArgs) error {
	type spec struct {
		name   string
		period time.Duration
	}
	var specs []spec
	for i := 1; i <= 3; i++ {
		name, hasName := a.Get(fmt.Sprintf("name%d", i))
		ns, err := a.Int(fmt.Sprintf("period%d", i), 0)
		if err != nil {
			return err
		}
		a.Get(fmt.Sprintf("fp%d", i))
		if !hasName {
			if ns != 0 {
				return fmt.Errorf("loadrt threads: period%d without name%d: %w", i, i, rtapi.ErrInvalid)
			}
			continue
		}
		if ns <= 0 {
			return fmt.Errorf("loadrt threads: thread %q needs period%d in ns: %w", name, i, rtapi.ErrInvalid)
		}
		specs = append(specs, spec{name, time.Duration(ns)})
	}
	if len(specs) == 0 {
		return fmt.Errorf("loadrt threads: no name1=... period1=...: %w", rtapi.ErrInvalid)
	}
	slices.SortStableFunc(specs, func(x, y spec) int { return cmp.Compare(x.period, y.period) })
	c, err := h.NewComponent("threads")
	if err != nil {
		return err
	}
	for _, s := range specs {
		if _, err := h.NewThread(s.name, s.period); err != nil {
			return err
		}
	}
	return c.Ready()
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// siggen (siggen(9)): index ramps from 0 to 1 once per cycle of the
// waveform; reset holds it at 0. The frequency is limited to half the
// thread's rate.
func newSiggen(c *hal.Component, p string) {
	var (
		square, sawtooth = c.Float(p+".square", hal.Out), c.Float(p+".sawtooth", hal.Out)
		triangle, sine   = c.Float(p+".triangle", hal.Out), c.Float(p+".sine", hal.Out)
		cosine           = c.Float(p+".cosine", hal.Out)
		clock            = c.Bit(p+".clock", hal.Out)
		frequency        = c.Float(p+".frequency", hal.In)
		amplitude        = c.Float(p+".amplitude", hal.In)
		offset           = c.Float(p+".offset", hal.In)
		reset            = c.Bit(p+".reset", hal.In)
		index            float64
	)
	frequency.Set(1)
	amplitude.Set(1)
	c.Export(p+".update", func(period time.Duration, _ int64) {
		dt := period.Seconds()
		if reset.Get() {
			index = 0
		} else {
			f := frequency.Get()
			nyquist := 0.5 / dt
			f = clamp(f, -nyquist, nyquist)
			index += f * dt
			if index >= 1 {
				index -= 1
			} else if index < 0 {
				index += 1
			}
		}
		amp, off := amplitude.Get(), offset.Get()
		sq := -1.0
		clock.Set(index > 0.5)
		if index > 0.5 {
			sq = 1
		}
		square.Set(sq*amp + off)
		sawtooth.Set((index*2-1)*amp + off)
		tri := index*4 - 2
		if tri < 0 {
			tri = -tri
		}
		triangle.Set((tri-1)*amp + off)
		angle := index * 2 * math.Pi
		sine.Set(math.Sin(angle)*amp + off)
		cosine.Set(math.Cos(angle)*amp + off)
	})
}

// scale (scale(9)): out = in * gain + offset.
func newScale(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	gain, offset := c.Float(p+".gain", hal.In), c.Float(p+".offset", hal.In)
	gain.Set(1)
	c.Export(p, func(time.Duration, int64) { out.Set(in.Get()*gain.Get() + offset.Get()) })
}

// sum2 (sum2(9)): out = in0 * gain0 + in1 * gain1 + offset.
func newSum2(c *hal.Component, p string) {
	in0, in1, out := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In), c.Float(p+".out", hal.Out)
	gain0, gain1 := c.Float(p+".gain0", hal.In), c.Float(p+".gain1", hal.In)
	offset := c.Float(p+".offset", hal.In)
	gain0.Set(1)
	gain1.Set(1)
	c.Export(p, func(time.Duration, int64) {
		out.Set(in0.Get()*gain0.Get() + in1.Get()*gain1.Get() + offset.Get())
	})
}

// mux2 (mux2(9)): out follows in1 when sel is true, else in0.
func newMux2(c *hal.Component, p string) {
	sel := c.Bit(p+".sel", hal.In)
	in0, in1, out := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In), c.Float(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) {
		if sel.Get() {
			out.Set(in1.Get())
		} else {
			out.Set(in0.Get())
		}
	})
}

// and2 (and2(9)): out = in0 && in1.
func newAnd2(c *hal.Component, p string) {
	in0, in1, out := c.Bit(p+".in0", hal.In), c.Bit(p+".in1", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(in0.Get() && in1.Get()) })
}

// or2 (or2(9)): out = in0 || in1.
func newOr2(c *hal.Component, p string) {
	in0, in1, out := c.Bit(p+".in0", hal.In), c.Bit(p+".in1", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(in0.Get() || in1.Get()) })
}

// not (not(9)): out = !in.
func newNot(c *hal.Component, p string) {
	in, out := c.Bit(p+".in", hal.In), c.Bit(p+".out", hal.Out)
	c.Export(p, func(time.Duration, int64) { out.Set(!in.Get()) })
}

// ddt (ddt(9)): out = (in - previous in) / period.
func newDdt(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	var old float64
	c.Export(p, func(period time.Duration, _ int64) {
		v := in.Get()
		out.Set((v - old) / period.Seconds())
		old = v
	})
}

// lowpass (lowpass(9)): out += (in - out) * gain; load sets out = in.
func newLowpass(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	gain, load := c.Float(p+".gain", hal.In), c.Bit(p+".load", hal.In)
	c.Export(p, func(time.Duration, int64) {
		if load.Get() {
			out.Set(in.Get())
			return
		}
		o := out.Get()
		out.Set(o + (in.Get()-o)*gain.Get())
	})
}

// limit3 (limit3(9)): out follows in, limited to [min, max], to maxv per
// second and to maxa per second squared, ramping at maxa as LinuxCNC's
// original limit3 does when it cannot follow. load jumps to in.
func newLimit3(c *hal.Component, p string) {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	load := c.Bit(p+".load", hal.In)
	inLimit := c.Bit(p+".in-limit", hal.Out)
	lo, hi := c.Float(p+".min", hal.In), c.Float(p+".max", hal.In)
	maxv, maxa := c.Float(p+".maxv", hal.In), c.Float(p+".maxa", hal.In)
	lo.Set(-1e20)
	hi.Set(1e20)
	maxv.Set(1e20)
	maxa.Set(1e20)
	var oldIn, oldOut, oldV float64
	c.Export(p, func(period time.Duration, _ int64) {
		dt := period.Seconds()
		raw := in.Get()
		target := clamp(raw, lo.Get(), hi.Get())
		if load.Get() {
			out.Set(target)
			oldIn, oldOut, oldV = target, target, 0
			inLimit.Set(target != raw)
			return
		}
		vmax, amax := maxv.Get(), maxa.Get()
		inV := (target - oldIn) / dt
		minV := math.Max(oldV-amax*dt, -vmax)
		maxV := math.Min(oldV+amax*dt, vmax)
		minOut, maxOut := oldOut+minV*dt, oldOut+maxV*dt
		var o float64
		if target >= minOut && target <= maxOut && inV >= minV && inV <= maxV {
			o = target
		} else {
			ramp := amax
			if inV <= oldV {
				ramp = -amax
			}
			match := (inV - oldV) / ramp
			avgV := (inV + oldV + ramp*dt) * 0.5
			estOut := oldOut + avgV*(match+dt)
			estIn := oldIn + inV*match
			e := estOut - estIn
			dp := -2 * ramp * dt * match
			if math.Abs(e+dp*2) < math.Abs(e) {
				ramp = -ramp
			}
			if ramp < 0 {
				o = minOut
			} else {
				o = maxOut
			}
		}
		oldV = (o - oldOut) / dt
		oldIn, oldOut = target, o
		out.Set(o)
		inLimit.Set(o != raw)
	})
}

// pid (pid(9)), pid.N.do-pid-calcs:
//
//	error  = command - feedback, limited to ±maxerror, less the deadband
//	errorI += error * period while enabled and the output is not pushing
//	          further into its limit; limited to ±maxerrorI; 0 when disabled
//	errorD = (error - previous error) / period, limited to ±maxerrorD
//	commandD, commandDD, commandDDD: command's first, second and third
//	          derivatives, limited to ±maxcmdD, ±maxcmdDD, ±maxcmdDDD
//	output = bias + Pgain*error + Igain*errorI + Dgain*errorD
//	         + FF0*command + FF1*commandD + FF2*commandDD + FF3*commandDDD,
//	         limited to ±maxoutput; 0 when disabled
//
// A limit of 0 means none. Pgain defaults to 1. The internal terms are
// Out pins (LinuxCNC's debug=1). While the output is in its limit,
// saturated is true, saturated-s counts seconds and saturated-count
// cycles (up to 2147483647). In the cycle index-enable falls, errorD and
// commandD keep their previous values, as LinuxCNC's pid does.
func newPID(c *hal.Component, p string) {
	f := func(n string) hal.Float { return c.Float(p+"."+n, hal.In) }
	o := func(n string) hal.Float { return c.Float(p+"."+n, hal.Out) }
	var (
		pgain, igain, dgain, bias    = f("Pgain"), f("Igain"), f("Dgain"), f("bias")
		ff0, ff1, ff2, ff3           = f("FF0"), f("FF1"), f("FF2"), f("FF3")
		deadband                     = f("deadband")
		maxerror, maxerrorI          = f("maxerror"), f("maxerrorI")
		maxerrorD, maxcmdD, maxcmdDD = f("maxerrorD"), f("maxcmdD"), f("maxcmdDD")
		maxcmdDDD, maxoutput         = f("maxcmdDDD"), f("maxoutput")
		command, feedback            = f("command"), f("feedback")
		errorOut, output             = o("error"), o("output")
		errorI, errorD               = o("errorI"), o("errorD")
		commandD, commandDD          = o("commandD"), o("commandDD")
		commandDDD                   = o("commandDDD")
		enable                       = c.Bit(p+".enable", hal.In)
		indexEnable                  = c.Bit(p+".index-enable", hal.In)
		saturated                    = c.Bit(p+".saturated", hal.Out)
		saturatedS                   = o("saturated-s")
		saturatedCount               = c.S32(p+".saturated-count", hal.Out)
		prevError, prevCmd           float64
		prevCmdD, prevCmdDD          float64
		rawErrorD, rawCmdD           float64 // before their limits
		prevIndex                    bool
		limitState, integ            float64
		satSeconds                   float64
		satCycles                    int32
		limit                        = func(v, l float64) float64 {
			if l != 0 {
				return clamp(v, -l, l)
			}
			return v
		}
	)
	pgain.Set(1)
	c.Export(p+".do-pid-calcs", func(period time.Duration, _ int64) {
		dt := period.Seconds()
		on := enable.Get()
		cmd := command.Get()
		e := cmd - feedback.Get()
		errorOut.Set(e)
		e = limit(e, maxerror.Get())
		db := deadband.Get()
		switch {
		case e > db:
			e -= db
		case e < -db:
			e += db
		default:
			e = 0
		}
		if on {
			if e*limitState <= 0 {
				integ += e * dt
			}
			integ = limit(integ, maxerrorI.Get())
		} else {
			integ = 0
		}
		errorI.Set(integ)
		index := indexEnable.Get()
		if !prevIndex || index {
			rawErrorD = (e - prevError) / dt
			rawCmdD = (cmd - prevCmd) / dt
		}
		prevIndex = index
		prevError, prevCmd = e, cmd
		ed := limit(rawErrorD, maxerrorD.Get())
		errorD.Set(ed)
		cd := limit(rawCmdD, maxcmdD.Get())
		commandD.Set(cd)
		cdd := limit((cd-prevCmdD)/dt, maxcmdDD.Get())
		prevCmdD = cd
		commandDD.Set(cdd)
		cddd := limit((cdd-prevCmdDD)/dt, maxcmdDDD.Get())
		prevCmdDD = cdd
		commandDDD.Set(cddd)
		out := 0.0
		limitState = 0
		if on {
			out = bias.Get() + pgain.Get()*e + igain.Get()*integ + dgain.Get()*ed +
				ff0.Get()*cmd + ff1.Get()*cd + ff2.Get()*cdd + ff3.Get()*cddd
			if m := maxoutput.Get(); m != 0 {
				if out > m {
					out, limitState = m, 1
				} else if out < -m {
					out, limitState = -m, -1
				}
			}
		}
		output.Set(out)
		if limitState != 0 {
			satSeconds += dt
			if satCycles != math.MaxInt32 {
				satCycles++
			}
		} else {
			satSeconds, satCycles = 0, 0
		}
		saturated.Set(limitState != 0)
		saturatedS.Set(satSeconds)
		saturatedCount.Set(satCycles)
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
