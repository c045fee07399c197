package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	_ "github.com/gortapi/gortapi/rtapi/hal/comps" // pid
	"github.com/gortapi/gortapi/rtapi/hal/halfile"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// ErrUnstable is what Run returns when the following error outgrows the
// trajectory (or is not a number): the loop lost control of the axis.
var ErrUnstable = errors.New("loop unstable")

// Config is one run of the loop.
type Config struct {
	Seconds float64       // how long to run (virtual seconds on clock)
	Seed    uint64        // the sim's fault-injection seed
	Jitter  time.Duration // mean wake-up lateness injected on clock
	StdDev  time.Duration // its standard deviation
	Options rtapi.Options // flavor and the rest
}

// Result is what a run measured.
type Result struct {
	MaxError   float64 // largest |following error| after settling, metres
	RMSError   float64 // its RMS, metres
	Cycles     int64
	Stats      rtapi.Stats
	Digest     uint64 // the sim's trace digest (0 on real flavors)
	ErrorsHash uint64 // FNV-1a of every sampled following error's bits
}

// Trajectory: x = A sin(ωt).
const (
	amplitude = 0.05    // m
	omega     = math.Pi // rad/s: one period every 2 s
	settle    = 0.1     // s ignored while the loop settles
)

// axis is the simulated carriage: m ẍ = u − b ẋ, integrated in fixed
// steps up to the time it is sampled. Only the servo task touches it.
type axis struct {
	x, v, u float64
	t       int64 // ns, time of the state
}

const (
	mass     = 1.0   // kg
	friction = 5.0   // N·s/m
	step     = 10000 // ns of integration step
)

// advance integrates the axis up to time t (semi-implicit Euler).
func (a *axis) advance(t int64) {
	for a.t < t {
		dt := float64(min(step, t-a.t)) / 1e9
		a.v += (a.u - friction*a.v) / mass * dt
		a.x += a.v * dt
		a.t += min(step, t-a.t)
	}
}

// Run opens rtapi with cfg.Options and a HAL on it, runs the servo loop
// on a 1 ms HAL thread and reports. The loop is the axis' own function
// and the standard PID (rtapi/hal/comps' pid, LinuxCNC's pid(9)):
//
//	axis.0.sample     advance the axis to now, set the command and its velocity, read the position
//	pid.0.do-pid-calcs force from the following error, with feed-forward
//	axis.0.drive      apply the force
func Run(cfg Config) (Result, error) {
	if cfg.Seconds <= 0 {
		return Result{}, fmt.Errorf("simpid: -seconds %v must be positive: %w", cfg.Seconds, rtapi.ErrInvalid)
	}
	if cfg.Options.Sim == nil {
		cfg.Options.Sim = &rtapi.SimOptions{Seed: cfg.Seed, TraceLimit: -1}
	}
	rt, err := rtapi.Open(cfg.Options)
	if err != nil {
		return Result{}, err
	}
	defer rt.Close()
	h, err := hal.New(rt, hal.Options{})
	if err != nil {
		return Result{}, err
	}
	defer h.Close()

	const period = time.Millisecond
	th, err := h.NewThread("servo", period)
	if err != nil {
		return Result{}, err
	}
	var (
		res     Result
		sumSq   float64
		samples int64
		hash    uint64 = 14695981039346656037
		fault   error  // the first loss of control, read after the run
		plant   axis
		tick    int64
	)
	c, err := h.NewComponent("axis")
	if err != nil {
		return Result{}, err
	}
	command, velocity := c.Float("axis.0.command", hal.Out), c.Float("axis.0.velocity", hal.Out)
	position, force := c.Float("axis.0.position", hal.Out), c.Float("axis.0.force", hal.In)
	// The servo believes it runs at its release, on the period grid; it
	// samples the axis when it really woke.
	c.Export("axis.0.sample", func(_ time.Duration, now int64) {
		if tick == 0 {
			plant.t = now
		}
		t := float64(tick) * period.Seconds()
		tick++
		plant.advance(now)
		want := amplitude * math.Sin(omega*t)
		command.Set(want)
		velocity.Set(amplitude * omega * math.Cos(omega*t))
		position.Set(plant.x)
		e := want - plant.x
		if t >= settle && fault == nil {
			res.MaxError = max(res.MaxError, math.Abs(e))
			sumSq += e * e
			samples++
			hash = (hash ^ math.Float64bits(e)) * 1099511628211
		}
		if fault == nil && (math.IsNaN(e) || math.Abs(e) > amplitude) {
			fault = fmt.Errorf("simpid: at %.3f s: following error %g m: %w", t, e, ErrUnstable)
		}
	})
	c.Export("axis.0.drive", func(time.Duration, int64) { plant.u = force.Get() })
	if err := c.Ready(); err != nil {
		return Result{}, err
	}
	if err := h.LoadRT("pid", "names=pid.0"); err != nil {
		return Result{}, err
	}
	cmds, err := halfile.Parse("simpid.hal", strings.NewReader(fmt.Sprintf(wiring, mass, friction)))
	if err != nil {
		return Result{}, err
	}
	if err := h.Load(io.Discard, cmds); err != nil {
		return Result{}, err
	}

	run := time.Duration(cfg.Seconds * float64(time.Second))
	if clock, err := sim.New(rt); err == nil {
		j := sim.NormalJitter(cfg.Jitter, cfg.StdDev)
		if err := clock.SetTask(th.Task(), sim.TaskConfig{Jitter: j, Cost: 50 * time.Microsecond}); err != nil {
			return Result{}, err
		}
		if err := h.Start(); err != nil {
			return Result{}, err
		}
		if err := clock.Advance(run); err != nil {
			return Result{}, errors.Join(err, h.Stop())
		}
		if err := h.Stop(); err != nil {
			return Result{}, err
		}
		tr, err := clock.Trace()
		if err != nil {
			return Result{}, err
		}
		res.Digest = tr.Digest
	} else {
		if err := h.Start(); err != nil {
			return Result{}, err
		}
		// Real time: the thread runs for run, unless it ends first.
		select {
		case <-th.Done():
		case <-time.After(run): // main goroutine: not a real-time path
		}
		if err := h.Stop(); err != nil {
			return Result{}, err
		}
	}
	if fault != nil {
		return Result{}, fault
	}
	res.Stats = th.Task().Stats()
	res.Cycles = res.Stats.Cycles
	if samples > 0 {
		res.RMSError = math.Sqrt(sumSq / float64(samples))
	}
	res.ErrorsHash = hash
	return res, nil
}

// wiring is the loop's .hal file: the PID follows the axis' command with
// its position as feedback, the command's velocity netted to
// command-deriv, feed-forward from the axis' model (FF1 the friction, FF2
// the mass; %g, %g), the error taken against the present command.
const wiring = `addf axis.0.sample servo
addf pid.0.do-pid-calcs servo
addf axis.0.drive servo
net cmd axis.0.command => pid.0.command
net vel axis.0.velocity => pid.0.command-deriv
net fb axis.0.position => pid.0.feedback
net force pid.0.output => axis.0.force
setp pid.0.enable TRUE
setp pid.0.error-previous-target FALSE
setp pid.0.Pgain 36000
setp pid.0.Igain 300000
setp pid.0.Dgain 380
setp pid.0.FF1 %[2]g
setp pid.0.FF2 %[1]g
`
