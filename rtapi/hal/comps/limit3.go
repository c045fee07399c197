package comps

import (
	"math"
	"time"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// limit3 (limit3(9)) is a port of LinuxCNC's limit3.comp: out follows in
// (0 when enable is false) within [min, max], at most maxv per second and
// maxa per second squared, planning its stop at a limit and easing onto
// the input over smooth-steps periods. load jumps out to in, clamped.
func newLimit3(c *hal.Component, p string) {
	var (
		in          = c.Float(p+".in", hal.In)
		enable      = c.Bit(p+".enable", hal.In)
		out         = c.Float(p+".out", hal.Out)
		load        = c.Bit(p+".load", hal.In)
		minPin      = c.Float(p+".min", hal.In)
		maxPin      = c.Float(p+".max", hal.In)
		maxvPin     = c.Float(p+".maxv", hal.In)
		maxaPin     = c.Float(p+".maxa", hal.In)
		smoothSteps = c.U32(p+".smooth-steps", hal.In)
		st          limit3State
	)
	enable.Set(true)
	minPin.Set(-1e20)
	maxPin.Set(1e20)
	maxvPin.Set(1e20)
	maxaPin.Set(1e7)
	smoothSteps.Set(2)
	c.Export(p, func(period time.Duration, _ int64) {
		invalue := 0.0
		if enable.Get() {
			invalue = in.Get()
		}
		o := st.next(float64(period)*1e-9, invalue, out.Get(), load.Get(), minPin.Get(), maxPin.Get(),
			maxvPin.Get(), maxaPin.Get(), smoothSteps.Get())
		out.Set(o)
	})
}

// limit3State is limit3.comp's variables.
type limit3State struct{ inPosOld, outOld float64 }

const limit3Epsilon = 1e-9

// next is limit3.comp's FUNCTION(_): it returns the new out, given the
// current one, and keeps the state for the next period. Products are
// wrapped in float64() so that no architecture fuses them (see pid).
// RT-safe.
func (s *limit3State) next(fperiod, invalue, out float64, load bool, min, max, maxv, maxa float64, smoothSteps uint32) float64 {
	set := func(o, in float64) float64 {
		s.outOld = out
		s.inPosOld = in
		return o
	}
	if load {
		lim := fmin(max, fmax(min, invalue))
		return set(lim, lim)
	}
	sVIVFT := func(vi, vf, t float64) float64 { return float64((vf + vi) / 2 * t) }
	tVIVFA := func(vi, vf, a float64) float64 { return (vf - vi) / a }
	vfVIAT := func(vi, a, t float64) float64 { return vi + float64(a*t) }

	inVel := (invalue - s.inPosOld) / fperiod
	outVel := (out - s.outOld) / fperiod
	minVel := fmax(vfVIAT(outVel, -maxa, fperiod), -maxv)
	maxVel := fmin(vfVIAT(outVel, maxa, fperiod), maxv)
	minPos := out + float64(minVel*fperiod)
	maxPos := out + float64(maxVel*fperiod)
	validNext := func(pos float64) bool { return pos <= maxPos && pos >= minPos }

	stopTimeMax := math.Abs(tVIVFA(maxVel, 0.0, maxa)) + fperiod
	stopTimeMin := math.Abs(tVIVFA(minVel, 0.0, maxa)) + fperiod
	stopPosMax := out + sVIVFT(maxVel, 0.0, stopTimeMax)
	stopPosMin := out + sVIVFT(minVel, 0.0, stopTimeMin)

	inVelTimeMax := math.Abs(tVIVFA(maxVel, inVel, maxa)) - fperiod
	inVelTimeMin := math.Abs(tVIVFA(minVel, inVel, maxa)) - fperiod
	outPosMax := maxPos + sVIVFT(maxVel, inVel, inVelTimeMax)
	outPosMin := minPos + sVIVFT(minVel, inVel, inVelTimeMin)
	inPosMax := invalue + float64(inVel*inVelTimeMax)
	inPosMin := invalue + float64(inVel*inVelTimeMin)

	velDiff := -outVel
	achPosMin, achPosMax := stopPosMin, stopPosMax
	var goalPosMin, goalPosMax, goalPosCur, goalPosPrev float64
	switch {
	case stopPosMax > max+limit3Epsilon && !validNext(max):
		goalPosMin, goalPosMax, goalPosCur, goalPosPrev = max, max, max, max
	case stopPosMin < min-limit3Epsilon && !validNext(min):
		goalPosMin, goalPosMax, goalPosCur, goalPosPrev = min, min, min, min
	case invalue >= max && inPosMax > outPosMax:
		goalPosMin, goalPosMax, goalPosCur, goalPosPrev = max, max, max, max
	case invalue <= min && inPosMin < outPosMin:
		goalPosMin, goalPosMax, goalPosCur, goalPosPrev = min, min, min, min
	default:
		goalPosMin, goalPosMax = inPosMin, inPosMax
		goalPosCur, goalPosPrev = invalue, s.inPosOld
		velDiff = outVel - inVel
		achPosMin, achPosMax = outPosMin, outPosMax
	}

	posDiff := out - goalPosPrev
	var t float64
	if math.Abs(velDiff) < limit3Epsilon {
		t = 0
	} else {
		t = posDiff / ((velDiff + 0) / 2)
	}
	if validNext(goalPosCur) && math.Abs(t) <= fperiod {
		return set(goalPosCur, invalue)
	}
	if achPosMax < goalPosMax+limit3Epsilon {
		return set(maxPos, invalue)
	}
	if achPosMin > goalPosMin-limit3Epsilon {
		return set(minPos, invalue)
	}
	if math.Abs(t) < fperiod*float64(smoothSteps) {
		sign := -1.0
		if t >= 0 {
			sign = 1
		}
		// (int) truncates toward zero; out of int's range C is undefined.
		ti := truncInt((t-float64(limit3Epsilon*sign))/fperiod+sign) * fperiod
		a := (velDiff - 0) / ti
		v := outVel + float64(a*fperiod)
		sp := float64(v * fperiod)
		return set(fmin(maxPos, fmax(minPos, out+sp)), invalue)
	}
	if goalPosMax+limit3Epsilon < achPosMax && goalPosPrev > out {
		return set(minPos, invalue)
	}
	if goalPosMin-limit3Epsilon > achPosMin && goalPosPrev < out {
		return set(maxPos, invalue)
	}
	return set((minPos+maxPos)/2, invalue)
}

// truncInt is C's (int) cast of v: toward zero; out of int's range, where
// C is undefined, clamped to it (NaN gives 0).
func truncInt(v float64) float64 {
	switch {
	case v != v:
		return 0
	case v >= math.MaxInt32:
		return math.MaxInt32
	case v <= math.MinInt32:
		return math.MinInt32
	}
	return math.Trunc(v)
}

// fmin and fmax are C's: a NaN argument gives the other one.
func fmin(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a < b:
		return a
	}
	return b
}

func fmax(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a > b:
		return a
	}
	return b
}
