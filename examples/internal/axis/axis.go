package axis

import "math"

// Trapezoid is a trapezoidal velocity profile from Start to Target:
// accelerate at Accel up to Vel, cruise, decelerate to rest. A move too
// short to reach Vel is a triangle. All values are in the axis' units
// (radians here) and seconds. The zero value is a move of length zero.
type Trapezoid struct {
	Start, Target float64
	dir           float64 // +1 or -1
	accel, vel    float64 // peak values reached (vel may be below the limit)
	tAccel, tFlat float64 // durations of the ramp and of the cruise
}

// NewTrapezoid plans a move. vel and accel must be positive.
func NewTrapezoid(start, target, vel, accel float64) Trapezoid {
	p := Trapezoid{Start: start, Target: target, dir: 1, accel: accel}
	d := target - start
	if d < 0 {
		p.dir, d = -1, -d
	}
	if d == 0 {
		return p
	}
	if d < vel*vel/accel { // triangle: accelerate to half way, then brake
		p.tAccel = math.Sqrt(d / accel)
		p.vel = accel * p.tAccel
		return p
	}
	p.vel = vel
	p.tAccel = vel / accel
	p.tFlat = (d - vel*p.tAccel) / vel
	return p
}

// Duration is how long the move takes.
func (p *Trapezoid) Duration() float64 { return 2*p.tAccel + p.tFlat }

// At returns the commanded position, velocity and acceleration t seconds
// into the move (held at the target after it ends). No allocation.
func (p *Trapezoid) At(t float64) (pos, vel, acc float64) {
	a, v := p.accel, p.vel
	switch {
	case t <= 0:
		return p.Start, 0, 0
	case t < p.tAccel:
		return p.Start + p.dir*a*t*t/2, p.dir * a * t, p.dir * a
	case t < p.tAccel+p.tFlat:
		s := v*p.tAccel/2 + v*(t-p.tAccel)
		return p.Start + p.dir*s, p.dir * v, 0
	case t < p.Duration():
		r := p.Duration() - t // time left
		return p.Target - p.dir*a*r*r/2, p.dir * a * r, -p.dir * a
	}
	return p.Target, 0, 0
}

// Motor is a simulated motor and load: inertia, viscous and Coulomb
// friction, and a torque limit. Advance integrates it over real elapsed
// time, so a late servo cycle really lets the plant drift, as on a
// machine.
type Motor struct {
	Inertia   float64 // kg·m²
	Viscous   float64 // N·m per rad/s
	Coulomb   float64 // N·m, opposing motion
	MaxTorque float64 // N·m, the drive's limit

	Pos, Vel float64 // rad, rad/s
	Torque   float64 // the torque applied (after the limit)
}

// motorStep is the integration step: small against the servo period.
const motorStep = 50e-6

// SetTorque applies a torque command, limited by the drive.
func (m *Motor) SetTorque(t float64) {
	m.Torque = min(max(t, -m.MaxTorque), m.MaxTorque)
}

// Advance integrates the motion over dt seconds with the present torque
// held (semi-implicit Euler in steps of at most 50 µs).
// RT-safe.
func (m *Motor) Advance(dt float64) {
	for dt > 0 {
		h := min(dt, motorStep)
		dt -= h
		friction := m.Viscous * m.Vel
		switch {
		case m.Vel > 0:
			friction += m.Coulomb
		case m.Vel < 0:
			friction -= m.Coulomb
		case math.Abs(m.Torque) <= m.Coulomb:
			continue // static friction holds it
		default:
			friction += math.Copysign(m.Coulomb, m.Torque)
		}
		acc := (m.Torque - friction) / m.Inertia
		v := m.Vel + acc*h
		if m.Vel != 0 && (v > 0) != (m.Vel > 0) && math.Abs(m.Torque) <= m.Coulomb {
			v = 0 // friction stops it rather than reversing it
		}
		m.Vel = v
		m.Pos += v * h
	}
}

// ErrorStats accumulates following-error statistics without allocating.
type ErrorStats struct {
	N     int64
	Max   float64 // largest |error|
	sumSq float64
	AtMax float64 // trajectory time of the largest error, s
	Final float64 // the last error
}

// Add records one sample taken at trajectory time t.
func (s *ErrorStats) Add(t, e float64) {
	s.N++
	s.sumSq += e * e
	s.Final = e
	if a := math.Abs(e); a > s.Max {
		s.Max, s.AtMax = a, t
	}
}

// RMS is the root mean square error.
func (s *ErrorStats) RMS() float64 {
	if s.N == 0 {
		return 0
	}
	return math.Sqrt(s.sumSq / float64(s.N))
}
