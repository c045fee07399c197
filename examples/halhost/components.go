package main

import (
	"fmt"
	"math"
	"time"

	"github.com/gortapi/gortapi/examples/internal/axis"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps" // siggen and the other standard components
)

// halhost's own components, loadable from a .hal file beside the standard
// ones of rtapi/hal/comps. Each makes its pins and parameters in the HAL's
// data segment and exports one function per instance; values cross
// threads through pins and signals (atomic 64-bit words), as in
// LinuxCNC's HAL, and halcmd and halmon see them.
func init() {
	hal.Register("motor", instances(newMotor))
	hal.Register("motor_encoder", instances(newEncoder))
	hal.Register("scope", instances(newScope))
	hal.Register("fault", loadFault)
}

// The simulated axis: inertia (kg m²), viscous (N m s) and Coulomb (N m)
// friction, and the drive's torque limit (N m). halhost.hal's pid gains
// (FF1, FF2, maxoutput) use the same figures.
const inertia, viscous, coulomb, maxTorque = 1e-4, 1e-4, 0.01, 0.5

// instances makes one component with one instance per name (count=N or
// names=a,b; one by default).
func instances(inst func(h *hal.HAL, c *hal.Component, p string)) hal.Factory {
	return func(h *hal.HAL, a *hal.LoadArgs) error {
		names, err := a.Instances(1)
		if err != nil {
			return err
		}
		c, err := h.NewComponent(a.Name)
		if err != nil {
			return err
		}
		for _, n := range names {
			inst(h, c, n)
		}
		return c.Ready()
	}
}

// newMotor is the simulated axis and its drive, advanced by the real time
// between its cycles (on the base thread). The drive has a watchdog, as
// real ones do: when its heartbeat pin (charge_pump's square wave, from
// the servo thread) stops toggling for the watchdog parameter's
// nanoseconds (100 servo periods by default), it drops the torque and
// clears the enabled pin, so a servo thread that died does not leave the
// axis running away. Its amp-enable input gates the
// torque too: unlinked or FALSE, the drive is off.
func newMotor(h *hal.HAL, c *hal.Component, p string) {
	var (
		torque, heartbeat  = c.Float(p+".torque", hal.In), c.Bit(p+".heartbeat", hal.In)
		ampEnable          = c.Bit(p+".amp-enable", hal.In)
		position, velocity = c.Float(p+".position", hal.Out), c.Float(p+".velocity", hal.Out)
		enabled            = c.Bit(p+".enabled", hal.Out)
		watchdog           = c.S64Param(p+".watchdog", hal.RW)
		m                  = axis.Motor{Inertia: inertia, Viscous: viscous, Coulomb: coulomb, MaxTorque: maxTorque}
		last, lastBeatAt   int64
		lastBeat, started  bool
	)
	wd := 100 * time.Millisecond
	if th, ok := h.Thread("servo"); ok {
		wd = 100 * th.Period()
	}
	watchdog.Set(int64(wd))
	c.Export(p+".update", func(_ time.Duration, now int64) {
		if b := heartbeat.Get(); b != lastBeat || !started {
			lastBeat, lastBeatAt = b, now
		}
		if !ampEnable.Get() || now-lastBeatAt > watchdog.Get() {
			m.SetTorque(0)
			enabled.Set(false)
		} else {
			m.SetTorque(torque.Get())
			enabled.Set(true)
		}
		if started {
			m.Advance(float64(now-last) / 1e9)
		}
		last, started = now, true
		position.Set(m.Pos)
		velocity.Set(m.Vel)
	})
}

// newEncoder quantises the motor's position (radians) to counts-per-rev.
func newEncoder(_ *hal.HAL, c *hal.Component, p string) {
	var (
		input            = c.Float(p+".motor-pos", hal.In)
		counts, position = c.S32(p+".counts", hal.Out), c.Float(p+".position", hal.Out)
		perRev           = c.FloatParam(p+".counts-per-rev", hal.RW)
	)
	perRev.Set(4000)
	c.Export(p+".update", func(time.Duration, int64) {
		cpr := perRev.Get()
		if cpr <= 0 {
			cpr = 1
		}
		n := math.Floor(input.Get() / (2 * math.Pi) * cpr)
		counts.Set(int32(max(math.MinInt32, min(math.MaxInt32, n))))
		position.Set(n * 2 * math.Pi / cpr)
	})
}

// newScope tracks the worst absolute value of its input over each second
// (the PID's following error) and shows it on error-max.
func newScope(_ *hal.HAL, c *hal.Component, p string) {
	var (
		in, errMax = c.Float(p+".in", hal.In), c.Float(p+".error-max", hal.Out)
		window     time.Duration
		worst      float64
	)
	c.Export(p+".sample", func(period time.Duration, _ int64) {
		worst = max(worst, math.Abs(in.Get()))
		if window += period; window >= time.Second {
			errMax.Set(worst)
			worst, window = 0, 0
		}
	})
}

// loadFault makes fault.0.trip, which panics once after=NS nanoseconds of
// its thread's time have passed since its first call: it shows that a
// panicking function stops only its own thread and is reported by name.
func loadFault(h *hal.HAL, a *hal.LoadArgs) error {
	after, err := a.Int("after", 0)
	if err != nil {
		return err
	}
	c, err := h.NewComponent(a.Name)
	if err != nil {
		return err
	}
	var start int64
	c.Export(a.Name+".0.trip", func(_ time.Duration, now int64) {
		if start == 0 {
			start = now
		}
		if now-start >= after {
			panic(fmt.Sprintf("injected fault after %v", time.Duration(after)))
		}
	})
	return c.Ready()
}
