package main

import (
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/examples/servo/control"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// Config describes the machine and the moves the servo makes.
type Config struct {
	// Moves are the successive targets, in radians, starting from 0.
	Moves []float64
	// Vel and Accel limit the trajectory (rad/s, rad/s²).
	Vel, Accel float64
	// Dwell is the rest after each move.
	Dwell time.Duration
	Motor control.Motor
	PID   control.PID
}

// DefaultConfig is a small servo motor with a load: 1e-4 kg·m², a
// 0.5 N·m drive, moving 10 rad (about 1.6 turns) and back at up to
// 50 rad/s and 500 rad/s², with feedback tuned for about 20 Hz
// bandwidth and feed-forward from the known inertia and friction.
func DefaultConfig() Config {
	const inertia, viscous, coulomb, maxTorque = 1e-4, 1e-4, 0.01, 0.5
	return Config{
		Moves: []float64{10, -10, 3},
		Vel:   50, Accel: 500,
		Dwell: 100 * time.Millisecond,
		Motor: control.Motor{Inertia: inertia, Viscous: viscous, Coulomb: coulomb, MaxTorque: maxTorque},
		PID: control.PID{
			Kp: 1.6, Ki: 20, Kd: 0.018,
			Kaff: inertia, Kvff: viscous, Kfff: coulomb,
			MaxOutput: maxTorque,
		},
	}
}

// Duration is the planned length of all moves and dwells.
func (c *Config) Duration() time.Duration {
	var d time.Duration
	from := 0.0
	for _, to := range c.Moves {
		p := control.NewTrapezoid(from, to, c.Vel, c.Accel)
		d += time.Duration(p.Duration()*1e9) + c.Dwell
		from = to
	}
	return d
}

// Servo is the position loop: a trajectory generator, a PID with
// feed-forward and the simulated motor, as three HAL functions called in
// that order by a 1 ms servo thread:
//
//	motor.0.update   advance the plant to now (real elapsed time), read the encoder
//	traj.0.update    next commanded position, velocity, acceleration
//	pid.0.update     torque from the following error, to the drive
//
// Its fields belong to the servo thread while it runs; read them after
// HAL.Stop (or Done, then Stop).
type Servo struct {
	cfg   Config
	motor control.Motor
	pid   control.PID

	move          int // index into cfg.Moves of the move under way
	traj          control.Trapezoid
	moveTick      int64 // servo cycle at which the move began
	tick          int64
	cmdPos        float64
	cmdVel        float64
	cmdAcc        float64
	lastNow       int64
	started       bool
	Following     control.ErrorStats // following error over the whole run
	done          atomic.Bool
	finishedAtSec float64
}

// NewServo makes a servo at rest at position 0.
func NewServo(cfg Config) *Servo {
	s := &Servo{cfg: cfg, motor: cfg.Motor, pid: cfg.PID}
	s.plan(0, 0)
	return s
}

// Install exports the three functions and adds them to thread, in order.
func (s *Servo) Install(h *hal.HAL, thread string) error {
	for _, f := range []struct {
		name string
		fn   hal.Func
	}{
		{"motor.0.update", s.motorUpdate},
		{"traj.0.update", s.trajUpdate},
		{"pid.0.update", s.pidUpdate},
	} {
		if _, err := h.Export(f.name, f.fn); err != nil {
			return err
		}
		if err := h.AddFunct(f.name, thread, hal.Last); err != nil {
			return err
		}
	}
	return nil
}

// Done reports whether every move and dwell has been made.
// RT-safe.
func (s *Servo) Done() bool { return s.done.Load() }

func (s *Servo) plan(move int, from float64) {
	s.move = move
	s.moveTick = s.tick
	to := from
	if move < len(s.cfg.Moves) {
		to = s.cfg.Moves[move]
	}
	s.traj = control.NewTrapezoid(from, to, s.cfg.Vel, s.cfg.Accel)
}

// motorUpdate advances the simulated plant by the real time elapsed since
// the last cycle: jitter in the thread's wake-up moves the plant as it
// would move a real axis.
func (s *Servo) motorUpdate(period time.Duration, now int64) {
	if s.started {
		s.motor.Advance(float64(now-s.lastNow) / 1e9)
	}
	s.lastNow, s.started = now, true
}

// trajUpdate steps the trajectory on the nominal period grid, as
// LinuxCNC's motion controller does.
func (s *Servo) trajUpdate(period time.Duration, now int64) {
	s.tick++
	t := float64(s.tick-s.moveTick) * period.Seconds()
	if s.move < len(s.cfg.Moves) && t >= s.traj.Duration()+s.cfg.Dwell.Seconds() {
		s.plan(s.move+1, s.traj.Target)
		t = float64(s.tick-s.moveTick) * period.Seconds()
		if s.move == len(s.cfg.Moves) {
			s.finishedAtSec = float64(s.tick) * period.Seconds()
			s.done.Store(true)
		}
	}
	s.cmdPos, s.cmdVel, s.cmdAcc = s.traj.At(t)
}

// pidUpdate closes the loop and records the following error.
func (s *Servo) pidUpdate(period time.Duration, now int64) {
	dt := period.Seconds()
	s.motor.SetTorque(s.pid.Update(dt, s.cmdPos, s.cmdVel, s.cmdAcc, s.motor.Pos))
	if !s.done.Load() {
		s.Following.Add(float64(s.tick)*dt, s.cmdPos-s.motor.Pos)
	}
}
