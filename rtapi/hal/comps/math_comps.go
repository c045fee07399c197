package comps

import (
	"math"
	"strconv"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// The math, compare and select components: ports of LinuxCNC's
// hypot.comp, wcomp.comp, comp.comp, abs.comp, near.comp, limit2.comp,
// mult2.comp, mux4.comp, select8.comp, match8.comp and
// tristate_float.comp. Each is a halcompile component with one "function
// _": loadrt takes count=N or names=a,b (default one instance, P.0, where
// P is NAME with '_' turned into '-' as halcompile's to_hal does:
// tristate-float.0), pins are P.N.pin and the function is named P.N. halcompile's
// trailing underscore (min_, in_, is_positive_) is not part of a HAL name.
// Every function is RT-safe: no allocation, lock or map lookup.

func init() {
	for _, m := range mathComps {
		hal.Register(m.name, halcompInstances(1, exported(m.make)))
	}
}

// funcMaker makes one instance's pins on c, named p.pin, and returns its
// function, not yet exported.
type funcMaker func(c *hal.Component, p string) hal.Func

// exported exports what make returns under the instance name, as
// halcompile names "function _".
func exported(make funcMaker) func(c *hal.Component, p string) {
	return func(c *hal.Component, p string) { c.Export(p, make(c, p)) }
}

var mathComps = []struct {
	name string
	make funcMaker
}{
	{"hypot", newHypot},
	{"wcomp", newWcomp},
	{"comp", newComp},
	{"abs", newAbs},
	{"near", newNear},
	{"limit2", newLimit2},
	{"mult2", newMult2},
	{"mux4", newMux4},
	{"select8", newSelect8},
	{"match8", newMatch8},
	{"tristate_float", newTristateFloat},
}

// hypot (hypot.comp): out = sqrt(in0*in0 + in1*in1 + in2*in2), each
// product and sum rounded as C does.
func newHypot(c *hal.Component, p string) hal.Func {
	in0, in1, in2 := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In), c.Float(p+".in2", hal.In)
	out := c.Float(p+".out", hal.Out)
	return func(time.Duration, int64) {
		a, b, d := in0.Get(), in1.Get(), in2.Get()
		out.Set(math.Sqrt(float64(a*a) + float64(b*b) + float64(d*d)))
	}
}

// wcomp (wcomp.comp): under = in <= min, over = in >= max, out = neither.
// A NaN in sets out TRUE, as in C; max <= min is undefined in the man
// page and computed the same way here.
func newWcomp(c *hal.Component, p string) hal.Func {
	in, lo, hi := c.Float(p+".in", hal.In), c.Float(p+".min", hal.In), c.Float(p+".max", hal.In)
	out, under, over := c.Bit(p+".out", hal.Out), c.Bit(p+".under", hal.Out), c.Bit(p+".over", hal.Out)
	return func(time.Duration, int64) {
		tmp := in.Get()
		u := tmp <= lo.Get()
		o := tmp >= hi.Get()
		under.Set(u)
		over.Set(o)
		out.Set(!(o || u))
	}
}

// comp (comp.comp): with d = in1 - in0 and h = 0.5 * hyst (a parameter,
// default 0), d < -h clears out and equal, d > h sets out and clears
// equal, otherwise equal is set and out keeps its value (the hysteresis;
// a NaN difference lands here too).
func newComp(c *hal.Component, p string) hal.Func {
	in0, in1 := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In)
	out, equal := c.Bit(p+".out", hal.Out), c.Bit(p+".equal", hal.Out)
	hyst := c.FloatParam(p+".hyst", hal.RW)
	return func(time.Duration, int64) {
		tmp := in1.Get() - in0.Get()
		halfhyst := 0.5 * hyst.Get()
		switch {
		case tmp < -halfhyst:
			out.Set(false)
			equal.Set(false)
		case tmp > halfhyst:
			out.Set(true)
			equal.Set(false)
		default:
			equal.Set(true)
		}
	}
}

// abs (abs.comp): in >= 0 gives out = in and sign FALSE, anything else
// (NaN too) out = -in and sign TRUE; is-positive is in > 0.000001 and
// is-negative in < -0.000001.
func newAbs(c *hal.Component, p string) hal.Func {
	in, out := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out)
	sign := c.Bit(p+".sign", hal.Out)
	pos, neg := c.Bit(p+".is-positive", hal.Out), c.Bit(p+".is-negative", hal.Out)
	return func(time.Duration, int64) {
		tmp := in.Get()
		if tmp >= 0.0 {
			sign.Set(false)
			out.Set(tmp)
		} else {
			sign.Set(true)
			out.Set(-tmp)
		}
		pos.Set(tmp > 0.000001)
		neg.Set(tmp < -0.000001)
	}
}

// near (near.comp): after negating both inputs when in1 < 0, out is TRUE
// when scale > 1 and in1/scale <= in2 <= in1*scale, or when |in1 - in2|
// <= difference. scale (default 1) and difference (default 0) are
// parameters.
func newNear(c *hal.Component, p string) hal.Func {
	in1p, in2p := c.Float(p+".in1", hal.In), c.Float(p+".in2", hal.In)
	scale, difference := c.FloatParam(p+".scale", hal.RW), c.FloatParam(p+".difference", hal.RW)
	out := c.Bit(p+".out", hal.Out)
	scale.Set(1)
	return func(time.Duration, int64) {
		in1, in2 := in1p.Get(), in2p.Get()
		if in1 < 0 {
			in1 = -in1
			in2 = -in2
		}
		s := scale.Get()
		out.Set((s > 1 && in1/s <= in2 && in2 <= float64(in1*s)) || math.Abs(in1-in2) <= difference.Get())
	}
}

// limit2 (limit2.comp): out follows in clamped to [min, max] (defaults
// ±1e20), moving at most maxv * period (maxv default 1e20) from the last
// out per period; load jumps to the clamped in. The last out starts at 0.
// A NaN passes each clamp, as C's clamp does.
func newLimit2(c *hal.Component, p string) hal.Func {
	in, out, load := c.Float(p+".in", hal.In), c.Float(p+".out", hal.Out), c.Bit(p+".load", hal.In)
	lo, hi, maxv := c.Float(p+".min", hal.In), c.Float(p+".max", hal.In), c.Float(p+".maxv", hal.In)
	lo.Set(-1e20)
	hi.Set(1e20)
	maxv.Set(1e20)
	var oldOut float64
	return func(period time.Duration, _ int64) {
		tmp := in.Get()
		maxdelta := float64(maxv.Get() * float64(float64(period)*1e-9))
		tmp = clampC(tmp, lo.Get(), hi.Get())
		if load.Get() {
			oldOut = tmp
			out.Set(tmp)
			return
		}
		tmp = clampC(tmp, oldOut-maxdelta, oldOut+maxdelta)
		oldOut = tmp
		out.Set(tmp)
	}
}

// clampC is limit2.comp's clamp: sub when v < sub, else sup when v > sup,
// else v (so NaN stays NaN).
func clampC(v, sub, sup float64) float64 {
	if v < sub {
		return sub
	}
	if v > sup {
		return sup
	}
	return v
}

// mult2 (mult2.comp): out = in0 * in1.
func newMult2(c *hal.Component, p string) hal.Func {
	in0, in1, out := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In), c.Float(p+".out", hal.Out)
	return func(time.Duration, int64) { out.Set(in0.Get() * in1.Get()) }
}

// mux4 (mux4.comp): out follows in(sel1*2 + sel0).
func newMux4(c *hal.Component, p string) hal.Func {
	sel0, sel1 := c.Bit(p+".sel0", hal.In), c.Bit(p+".sel1", hal.In)
	out := c.Float(p+".out", hal.Out)
	in0, in1 := c.Float(p+".in0", hal.In), c.Float(p+".in1", hal.In)
	in2, in3 := c.Float(p+".in2", hal.In), c.Float(p+".in3", hal.In)
	return func(time.Duration, int64) {
		switch {
		case sel1.Get() && sel0.Get():
			out.Set(in3.Get())
		case sel1.Get():
			out.Set(in2.Get())
		case sel0.Get():
			out.Set(in1.Get())
		default:
			out.Set(in0.Get())
		}
	}
}

// select8 (select8.comp): outN is TRUE only when enable (default TRUE)
// and sel == N, for N 0 to 7; any other sel clears them all.
func newSelect8(c *hal.Component, p string) hal.Func {
	enable, sel := c.Bit(p+".enable", hal.In), c.S32(p+".sel", hal.In)
	var out [8]hal.Bit
	for i := range out {
		out[i] = c.Bit(p+".out"+strconv.Itoa(i), hal.Out)
	}
	enable.Set(true)
	return func(time.Duration, int64) {
		s, e := sel.Get(), enable.Get()
		for i := range out {
			out[i].Set(e && s == int32(i))
		}
	}
}

// match8 (match8.comp): out is TRUE when in (default TRUE) is and aN ==
// bN for every N 0 to 7.
func newMatch8(c *hal.Component, p string) hal.Func {
	in := c.Bit(p+".in", hal.In)
	var a, b [8]hal.Bit
	for i := range a {
		a[i] = c.Bit(p+".a"+strconv.Itoa(i), hal.In)
	}
	for i := range b {
		b[i] = c.Bit(p+".b"+strconv.Itoa(i), hal.In)
	}
	out := c.Bit(p+".out", hal.Out)
	in.Set(true)
	return func(time.Duration, int64) {
		match := in.Get()
		for i := 0; match && i < len(a); i++ {
			match = a[i].Get() == b[i].Get()
		}
		out.Set(match)
	}
}

// tristate_float (tristate_float.comp): when enable is TRUE, out (an IO
// pin) = in; otherwise out is left to whoever else drives it.
func newTristateFloat(c *hal.Component, p string) hal.Func {
	in, out, enable := c.Float(p+".in", hal.In), c.Float(p+".out", hal.IO), c.Bit(p+".enable", hal.In)
	return func(time.Duration, int64) {
		if enable.Get() {
			out.Set(in.Get())
		}
	}
}
