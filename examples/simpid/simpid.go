package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/rtapi"
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

// pid is a textbook PID with velocity and acceleration feed-forward.
type pid struct {
	kp, ki, kd float64
	integral   float64
	lastErr    float64
}

func (p *pid) update(err, dt, ff float64) float64 {
	p.integral += err * dt
	d := (err - p.lastErr) / dt
	p.lastErr = err
	return p.kp*err + p.ki*p.integral + p.kd*d + ff
}

// Run opens rtapi with cfg.Options, runs the servo loop and reports.
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

	const period = time.Millisecond
	var (
		res     Result
		sumSq   float64
		samples int64
		hash    uint64       = 14695981039346656037
		fault   atomic.Value // a body error, read after the run
	)
	ctrl := pid{kp: 36000, ki: 300000, kd: 380}
	var plant axis
	var start int64
	servo, err := rt.NewPeriodicTask(rtapi.TaskSpec{Name: "servo", Period: period}, func(c *rtapi.Cycle) {
		if c.Number() == 0 {
			start = c.Release()
			plant.t = c.Now()
		}
		// The servo believes it runs at its release; it samples the
		// axis when it really woke.
		t := float64(c.Release()-start) / 1e9
		plant.advance(c.Now())
		want := amplitude * math.Sin(omega*t)
		vel := amplitude * omega * math.Cos(omega*t)
		acc := -amplitude * omega * omega * math.Sin(omega*t)
		e := want - plant.x
		plant.u = ctrl.update(e, period.Seconds(), mass*acc+friction*vel)
		if t >= settle {
			res.MaxError = max(res.MaxError, math.Abs(e))
			sumSq += e * e
			samples++
			hash = (hash ^ math.Float64bits(e)) * 1099511628211
		}
		if math.IsNaN(e) || math.Abs(e) > amplitude {
			fault.Store(fmt.Errorf("simpid: at %.3f s: following error %g m: %w", t, e, ErrUnstable))
			c.Stop(errors.New("unstable"))
		}
	})
	if err != nil {
		return Result{}, err
	}
	run := time.Duration(cfg.Seconds * float64(time.Second))
	if clock, err := sim.New(rt); err == nil {
		j := sim.NormalJitter(cfg.Jitter, cfg.StdDev)
		if err := clock.SetTask(servo, sim.TaskConfig{Jitter: j, Cost: 50 * time.Microsecond}); err != nil {
			return Result{}, err
		}
		if err := servo.Start(); err != nil {
			return Result{}, err
		}
		if err := clock.Advance(run); err != nil {
			return Result{}, err
		}
		servo.Stop()
		if err := servo.Wait(); err != nil && fault.Load() == nil {
			return Result{}, err
		}
		tr, err := clock.Trace()
		if err != nil {
			return Result{}, err
		}
		res.Digest = tr.Digest
	} else {
		if err := servo.Start(); err != nil {
			return Result{}, err
		}
		// Real time: the task runs for run, unless it ends first; then
		// WaitContext stops it and waits for it.
		ctx, cancel := context.WithTimeout(context.Background(), run)
		err := servo.WaitContext(ctx)
		cancel()
		if err != nil && fault.Load() == nil {
			return Result{}, err
		}
	}
	if err, _ := fault.Load().(error); err != nil {
		return Result{}, err
	}
	res.Stats = servo.Stats()
	res.Cycles = res.Stats.Cycles
	if samples > 0 {
		res.RMSError = math.Sqrt(sumSq / float64(samples))
	}
	res.ErrorsHash = hash
	return res, nil
}
