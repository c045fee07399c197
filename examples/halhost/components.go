package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gortapi/gortapi/examples/halhost/pins"
	"github.com/gortapi/gortapi/examples/servo/control"
	"github.com/gortapi/gortapi/rtapi/hal"
)

// pinNames is the pin table, in the order halmon shows it.
var pinNames = []string{
	"siggen.0.sine", "siggen.0.cosine", "siggen.0.square",
	"pid.0.command", "pid.0.feedback", "pid.0.error", "pid.0.output", "pid.0.heartbeat",
	"motor.0.position", "motor.0.velocity", "motor.0.enabled",
	"encoder.0.counts", "encoder.0.position",
	"scope.0.error-max",
}

// Each component below takes its pins at set-up and exports one function.
// A function writes only its own component's pins; values cross threads
// through the pins (atomic 64-bit words), as in LinuxCNC's HAL.

// siggen is a signal generator (LinuxCNC's siggen): sine, cosine and
// square of Amplitude at Frequency.
type siggen struct {
	Frequency, Amplitude float64
	phase                float64
	sine, cosine, square *pins.Pin
}

func (g *siggen) update(period time.Duration, now int64) {
	g.phase += g.Frequency * period.Seconds()
	if g.phase >= 1 {
		g.phase--
	}
	s, c := math.Sincos(2 * math.Pi * g.phase)
	g.sine.Set(g.Amplitude * s)
	g.cosine.Set(g.Amplitude * c)
	g.square.Set(math.Copysign(g.Amplitude, s))
}

// pid follows its command pin with the feedback pin, feed-forward from the
// command's derivatives (LinuxCNC pid's FF1 and FF2).
type pid struct {
	control.PID
	input                          *pins.Pin // what the command pin is linked to
	command, feedback, errPin, out *pins.Pin
	heartbeat                      *pins.Pin // counts updates: the drive's watchdog watches it
	feedbackSrc                    *pins.Pin
	lastCmd, lastVel               float64
	samples                        int // command samples seen, up to 2
}

func (p *pid) update(period time.Duration, now int64) {
	dt := period.Seconds()
	cmd, fb := p.input.Get(), p.feedbackSrc.Get()
	p.command.Set(cmd)
	p.feedback.Set(fb)
	// Differentiate the command once two (for velocity) or three (for
	// acceleration) samples exist, so the start is not a kick.
	vel, acc := 0.0, 0.0
	if p.samples >= 1 {
		vel = (cmd - p.lastCmd) / dt
	}
	if p.samples >= 2 {
		acc = (vel - p.lastVel) / dt
	}
	p.lastCmd, p.lastVel, p.samples = cmd, vel, min(p.samples+1, 2)
	p.errPin.Set(cmd - fb)
	p.out.Set(p.Update(dt, cmd, vel, acc, fb))
	p.heartbeat.Set(p.heartbeat.Get() + 1)
}

// motor is the simulated axis and its drive, advanced on the base thread
// by the real time between its cycles. The drive has a watchdog, as real
// ones do (LinuxCNC's charge pump): when the PID's heartbeat stops for
// Watchdog, it drops the torque and clears motor.0.enabled, so a servo
// thread that died does not leave the axis running away.
type motor struct {
	control.Motor
	Watchdog                   time.Duration
	torque, position, velocity *pins.Pin
	heartbeat, enabled         *pins.Pin
	last                       int64
	started                    bool
	lastBeat                   float64
	lastBeatAt                 int64
}

func (m *motor) update(period time.Duration, now int64) {
	if b := m.heartbeat.Get(); b != m.lastBeat || !m.started {
		m.lastBeat, m.lastBeatAt = b, now
	}
	if now-m.lastBeatAt > int64(m.Watchdog) {
		m.SetTorque(0)
		m.enabled.Set(0)
	} else {
		m.SetTorque(m.torque.Get())
		m.enabled.Set(1)
	}
	if m.started {
		m.Advance(float64(now-m.last) / 1e9)
	}
	m.last, m.started = now, true
	m.position.Set(m.Pos)
	m.velocity.Set(m.Vel)
}

// encoder quantises the motor's position to CountsPerRev, on the base
// thread.
type encoder struct {
	CountsPerRev     float64
	input            *pins.Pin
	counts, position *pins.Pin
}

func (e *encoder) update(period time.Duration, now int64) {
	c := math.Floor(e.input.Get() / (2 * math.Pi) * e.CountsPerRev)
	e.counts.Set(c)
	e.position.Set(c * 2 * math.Pi / e.CountsPerRev)
}

// scope tracks the worst following error over each second and publishes
// a frame of every pin through the seqlock, last in the servo thread.
type scope struct {
	table          *pins.Table
	errPin, errMax *pins.Pin
	window, n      int64
	worst          float64
	cycle          int64
}

func (s *scope) sample(period time.Duration, now int64) {
	if e := math.Abs(s.errPin.Get()); e > s.worst {
		s.worst = e
	}
	s.n++
	if s.n >= s.window {
		s.errMax.Set(s.worst)
		s.worst, s.n = 0, 0
	}
	s.cycle++
	s.table.Publish(now, s.cycle)
}

// fault panics once armed: it shows that a panicking function stops only
// its own thread and is reported by name.
type fault struct{ after, start int64 }

func (f *fault) trip(period time.Duration, now int64) {
	if f.start == 0 {
		f.start = now
	}
	if now-f.start >= f.after {
		panic(fmt.Sprintf("injected fault after %v", time.Duration(f.after)))
	}
}

// wire builds the components on the pin table and adds their functions:
// motor and encoder on the base thread, siggen, pid and scope on the servo
// thread.
func wire(h *hal.HAL, t *pins.Table, base, servo string, faultAfter time.Duration) error {
	pin := func(name string) *pins.Pin {
		p, err := t.Pin(name)
		if err != nil {
			panic(err) // pinNames and the code below disagree: a programming error
		}
		return p
	}
	const inertia, viscous, coulomb, maxTorque = 1e-4, 1e-4, 0.01, 0.5
	g := &siggen{Frequency: 0.5, Amplitude: 5,
		sine: pin("siggen.0.sine"), cosine: pin("siggen.0.cosine"), square: pin("siggen.0.square")}
	p := &pid{
		PID:   control.PID{Kp: 1.6, Ki: 20, Kd: 0.018, Kaff: inertia, Kvff: viscous, Kfff: coulomb, MaxOutput: maxTorque},
		input: pin("siggen.0.sine"), feedbackSrc: pin("encoder.0.position"),
		command: pin("pid.0.command"), feedback: pin("pid.0.feedback"), errPin: pin("pid.0.error"), out: pin("pid.0.output"),
		heartbeat: pin("pid.0.heartbeat"),
	}
	th, _ := h.Thread(servo)
	m := &motor{
		Motor:    control.Motor{Inertia: inertia, Viscous: viscous, Coulomb: coulomb, MaxTorque: maxTorque},
		Watchdog: 100 * th.Period(),
		torque:   pin("pid.0.output"), position: pin("motor.0.position"), velocity: pin("motor.0.velocity"),
		heartbeat: pin("pid.0.heartbeat"), enabled: pin("motor.0.enabled"),
	}
	e := &encoder{CountsPerRev: 4000, input: pin("motor.0.position"),
		counts: pin("encoder.0.counts"), position: pin("encoder.0.position")}
	s := &scope{table: t, errPin: pin("pid.0.error"), errMax: pin("scope.0.error-max"),
		window: max(1, int64(time.Second/th.Period()))}

	functs := []struct {
		name, thread string
		fn           hal.Func
	}{
		{"motor.0.update", base, m.update},
		{"encoder.0.update", base, e.update},
		{"siggen.0.update", servo, g.update},
		{"pid.0.do-pid-calcs", servo, p.update},
		{"scope.0.sample", servo, s.sample},
	}
	if faultAfter > 0 {
		f := &fault{after: int64(faultAfter)}
		functs = append(functs, struct {
			name, thread string
			fn           hal.Func
		}{"fault.0.trip", servo, f.trip})
	}
	for _, f := range functs {
		if _, err := h.Export(f.name, f.fn); err != nil {
			return err
		}
		if err := h.AddFunct(f.name, f.thread, hal.Last); err != nil {
			return err
		}
	}
	return nil
}
