package axis_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gortapi/gortapi/examples/internal/axis"
)

func TestTrapezoidProfiles(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		from, to, vel, acc, wantDur float64
	}{
		{"trapezoid", 0, 10, 50, 500, 0.3}, // 0.1 s ramp each side, 0.1 s cruise
		{"triangle", 0, 1, 50, 500, 2 * math.Sqrt(1.0/500)},
		{"backwards", 10, -10, 50, 500, 0.5}, // 20 rad: 0.1+0.3+0.1
		{"no move", 3, 3, 50, 500, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := axis.NewTrapezoid(tc.from, tc.to, tc.vel, tc.acc)
			assert.InDelta(t, tc.wantDur, p.Duration(), 1e-9)
			const dt = 1e-4
			prevPos, _, _ := p.At(0)
			assert.Equal(t, tc.from, prevPos)
			for tt := dt; tt < p.Duration()+0.01; tt += dt {
				pos, vel, acc := p.At(tt)
				assert.LessOrEqual(t, math.Abs(vel), tc.vel+1e-9, "velocity limit at %v", tt)
				assert.LessOrEqual(t, math.Abs(acc), tc.acc+1e-9, "acceleration limit at %v", tt)
				assert.LessOrEqual(t, math.Abs(pos-prevPos), tc.vel*dt+1e-9, "position continuous at %v", tt)
				prevPos = pos
			}
			pos, vel, acc := p.At(p.Duration() + 1)
			assert.Equal(t, tc.to, pos)
			assert.Zero(t, vel)
			assert.Zero(t, acc)
		})
	}
}

func TestMotor(t *testing.T) {
	m := axis.Motor{Inertia: 1e-4, Viscous: 1e-4, Coulomb: 0.01, MaxTorque: 0.5}
	m.SetTorque(5)
	assert.Equal(t, 0.5, m.Torque, "the drive limits torque")
	m.SetTorque(0.005)
	m.Advance(0.1)
	assert.Zero(t, m.Vel, "static friction holds against a small torque")
	m.SetTorque(0.5)
	m.Advance(0.01)
	assert.InDelta(t, (0.5-0.01)/1e-4*0.01, m.Vel, 2, "accelerates at (τ-friction)/J")
	m.SetTorque(0)
	m.Advance(1)
	assert.Zero(t, m.Vel, "friction stops it without reversing it")
	pos := m.Pos
	m.Advance(1)
	assert.Equal(t, pos, m.Pos)
}

func TestErrorStats(t *testing.T) {
	var s axis.ErrorStats
	assert.Zero(t, s.RMS())
	s.Add(0.1, 3)
	s.Add(0.2, -4)
	assert.Equal(t, 4.0, s.Max)
	assert.Equal(t, 0.2, s.AtMax)
	assert.Equal(t, -4.0, s.Final)
	assert.InDelta(t, math.Sqrt(12.5), s.RMS(), 1e-12)
}
