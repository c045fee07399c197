package main

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/examples/internal/axis"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps" // pid
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
)

// Config describes the machine and the moves the servo makes.
type Config struct {
	// Moves are the successive targets, in radians, starting from 0.
	Moves []float64
	// Vel and Accel limit the trajectory (rad/s, rad/s²).
	Vel, Accel float64
	// Dwell is the rest after each move.
	Dwell time.Duration
	Motor axis.Motor
	PID   Gains
}

// Gains are the parameters of the PID (rtapi/hal/comps' pid, LinuxCNC's
// pid(9)), set on its pins of the same names: feedback gains,
// feed-forward per unit of commanded velocity (FF1: viscous friction),
// the output limit, and the integrator's limit (anti-windup). Inertia
// and Friction are the feed-forward per unit of commanded acceleration
// and toward the commanded motion (Coulomb friction): the trajectory,
// which knows the acceleration exactly, puts their sum on the PID's bias
// pin (pid's own FF2 differentiates the velocity a period late).
type Gains struct {
	Pgain, Igain, Dgain float64
	FF1                 float64
	MaxOutput           float64
	MaxErrorI           float64
	Inertia, Friction   float64
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
		Motor: axis.Motor{Inertia: inertia, Viscous: viscous, Coulomb: coulomb, MaxTorque: maxTorque},
		PID: Gains{
			Pgain: 1.6, Igain: 20, Dgain: 0.018,
			FF1: viscous, Inertia: inertia, Friction: coulomb,
			MaxOutput: maxTorque, MaxErrorI: maxTorque / 20,
		},
	}
}

// Duration is the planned length of all moves and dwells.
func (c *Config) Duration() time.Duration {
	var d time.Duration
	from := 0.0
	for _, to := range c.Moves {
		p := axis.NewTrapezoid(from, to, c.Vel, c.Accel)
		d += time.Duration(p.Duration()*1e9) + c.Dwell
		from = to
	}
	return d
}

// Servo is the position loop: a trajectory generator, the standard PID
// (rtapi/hal/comps' pid) with feed-forward and the simulated motor, as
// three HAL functions called in that order by a 1 ms servo thread and
// wired by signals:
//
//	motor.0.update     apply the torque, advance the plant to now (real elapsed time), read the encoder
//	traj.0.update      next commanded position and feed-forward; record the following error
//	pid.0.do-pid-calcs torque from the following error, to the drive
//
// Its fields belong to the servo thread while it runs; read them after
// HAL.Stop (or Done, then Stop).
type Servo struct {
	cfg   Config
	motor axis.Motor

	torque, position       hal.Float // the motor's pins
	cmdPosPin, feedForward hal.Float // the trajectory's pins

	move          int // index into cfg.Moves of the move under way
	traj          axis.Trapezoid
	moveTick      int64 // servo cycle at which the move began
	tick          int64
	lastNow       int64
	started       bool
	Following     axis.ErrorStats // following error over the whole run
	done          atomic.Bool
	finishedAtSec float64
}

// NewServo makes a servo at rest at position 0.
func NewServo(cfg Config) *Servo {
	s := &Servo{cfg: cfg, motor: cfg.Motor}
	s.plan(0, 0)
	return s
}

// Install makes the motor's and the trajectory's pins and functions,
// loads the PID (pid.0) and adds the three functions to thread, in
// order, wired by signals.
func (s *Servo) Install(h *hal.HAL, thread string) error {
	c, err := h.NewComponent("servo")
	if err != nil {
		return err
	}
	s.torque, s.position = c.Float("motor.0.torque", hal.In), c.Float("motor.0.position", hal.Out)
	s.cmdPosPin, s.feedForward = c.Float("traj.0.position", hal.Out), c.Float("traj.0.feed-forward", hal.Out)
	c.Export("motor.0.update", s.motorUpdate)
	c.Export("traj.0.update", s.trajUpdate)
	if err := c.Ready(); err != nil {
		return err
	}
	if err := h.LoadRT("pid", "names=pid.0"); err != nil {
		return err
	}
	g := s.cfg.PID
	wiring := fmt.Sprintf(`addf motor.0.update %[1]s
addf traj.0.update %[1]s
addf pid.0.do-pid-calcs %[1]s
net pos-cmd traj.0.position => pid.0.command
net feed-forward traj.0.feed-forward => pid.0.bias
net pos-fb motor.0.position => pid.0.feedback
net torque pid.0.output => motor.0.torque
setp pid.0.enable TRUE
setp pid.0.error-previous-target FALSE
setp pid.0.Pgain %[2]v
setp pid.0.Igain %[3]v
setp pid.0.Dgain %[4]v
setp pid.0.FF1 %[5]v
setp pid.0.maxoutput %[6]v
setp pid.0.maxerrorI %[7]v
`, thread, g.Pgain, g.Igain, g.Dgain, g.FF1, g.MaxOutput, g.MaxErrorI)
	cmds, err := halfile.Parse("servo.hal", strings.NewReader(wiring))
	if err != nil {
		return err
	}
	return h.Load(io.Discard, cmds)
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
	s.traj = axis.NewTrapezoid(from, to, s.cfg.Vel, s.cfg.Accel)
}

// motorUpdate applies the PID's last torque and advances the simulated
// plant by the real time elapsed since the last cycle: jitter in the
// thread's wake-up moves the plant as it would move a real axis.
func (s *Servo) motorUpdate(period time.Duration, now int64) {
	s.motor.SetTorque(s.torque.Get())
	if s.started {
		s.motor.Advance(float64(now-s.lastNow) / 1e9)
	}
	s.lastNow, s.started = now, true
	s.position.Set(s.motor.Pos)
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
	pos, vel, acc := s.traj.At(t)
	s.cmdPosPin.Set(pos)
	ff := s.cfg.PID.Inertia * acc
	switch {
	case vel > 0:
		ff += s.cfg.PID.Friction
	case vel < 0:
		ff -= s.cfg.PID.Friction
	}
	s.feedForward.Set(ff)
	if !s.done.Load() {
		s.Following.Add(float64(s.tick)*period.Seconds(), pos-s.motor.Pos)
	}
}
