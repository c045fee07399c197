package pll

import (
	"math"
	"time"
)

// PI is a proportional-integral controller of a phase error. Its zero
// value has no gain; set Kp and Ki. Not safe for concurrent use: it
// belongs to the function that calls Update each cycle.
type PI struct {
	// Kp is the share of the phase error corrected in one period, Ki the
	// share of the accumulated error. For a loop that settles in tens of
	// periods without overshooting much: Kp 0.5, Ki 0.05. The loop is
	// unstable for Kp above 2 or a Ki close to Kp.
	Kp, Ki float64
	// Limit bounds the correction; 0: none. Set it to what
	// SetPLLCorrection applies (rtapi.PLLMaxCorrection of the period):
	// while the output is at the limit the integral stops growing, so the
	// loop does not overshoot after a large initial error.
	Limit time.Duration

	integral float64
}

// Update takes this cycle's phase error in nanoseconds, the release minus
// the external event (positive: the releases are late), and returns the
// period correction to apply: negative shortens the following periods.
// RT-safe.
func (p *PI) Update(phaseError int64) time.Duration {
	e := float64(phaseError)
	u := -(p.Kp*e + p.Ki*(p.integral+e))
	if lim := float64(p.Limit); lim > 0 && math.Abs(u) > lim {
		return time.Duration(math.Copysign(lim, u)) // saturated: do not integrate
	}
	p.integral += e
	return time.Duration(math.Round(u))
}

// Reset forgets the accumulated error, as after a resync.
func (p *PI) Reset() { p.integral = 0 }
