package rtapi

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gortapi/gortapi/flavors"
)

// SimOptions configure the sim flavor (Options.Sim). The zero value
// works. Other flavors ignore them.
type SimOptions struct {
	// Seed seeds the fault injection: each task draws its wake-up
	// lateness from its own stream, keyed by Seed and the task's name, so
	// adding a task does not change what the others draw.
	Seed uint64
	// HangTimeout is how long, in real time, a controller call waits for
	// a task body to come back to WaitPeriod before it fails with an
	// error naming the task (errors.Is ErrTimeout). Zero: 5 s.
	HangTimeout time.Duration
	// TraceLimit is how many of the most recent trace events are kept.
	// Zero: 4096; negative: none (Trace still gives the count and the
	// digest of every event).
	TraceLimit int
	// SharedCPU runs all tasks on one simulated CPU, scheduled like
	// SCHED_FIFO: a release waits while a task of higher or equal
	// priority executes, and a higher-priority task preempts lower ones,
	// lengthening their cycles by its cost. So a base thread's cost shows
	// up as the servo thread's latency and execution time. Off (the
	// default): each task behaves as if it had a CPU of its own.
	SharedCPU bool
}

// simConfig is Options.Sim as the sim flavor takes it (other flavors
// ignore it). Ties between tasks go by creation order, from rt.Tasks.
// Called by Open before it selects the flavor.
func (rt *RT) simConfig() (flavors.SimConfig, error) {
	o := SimOptions{}
	if rt.opts.Sim != nil {
		o = *rt.opts.Sim
	}
	if o.HangTimeout < 0 {
		return flavors.SimConfig{}, fmt.Errorf("sim hang timeout %v is negative: %w", o.HangTimeout, ErrInvalid)
	}
	return flavors.SimConfig{Seed: o.Seed, HangTimeout: o.HangTimeout, TraceLimit: o.TraceLimit,
		SharedCPU: o.SharedCPU, Order: rt.taskNames}, nil
}

// taskNames lists the names of rt's tasks in creation order.
func (rt *RT) taskNames() []string {
	tasks := rt.Tasks()
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = t.spec.Name
	}
	return names
}

// Jitter is a distribution of wake-up lateness the sim flavor injects
// into a task's releases; see SimTaskConfig. The zero value adds none.
type Jitter = flavors.Jitter

// ConstantJitter wakes every release exactly d late.
func ConstantJitter(d time.Duration) Jitter { return flavors.ConstantJitter(d) }

// UniformJitter draws lateness uniformly from [lo, hi).
func UniformJitter(lo, hi time.Duration) Jitter { return flavors.UniformJitter(lo, hi) }

// NormalJitter draws lateness from a normal distribution cut off at 0.
func NormalJitter(mean, stddev time.Duration) Jitter { return flavors.NormalJitter(mean, stddev) }

// ExponentialJitter draws lateness from an exponential distribution:
// mostly small, with a long tail.
func ExponentialJitter(mean time.Duration) Jitter { return flavors.ExponentialJitter(mean) }

// HistogramJitter replays a latency histogram recorded on a real machine
// (a task's Stats().Latency, or one saved by the latency tool), so that a
// test can ask whether a servo stays stable with that machine's jitter.
func HistogramJitter(h Histogram) Jitter { return flavors.HistogramJitter(h) }

// SimTaskConfig is what the sim flavor injects into one task: wake-up
// jitter and the execution time each cycle costs. The zero value injects
// nothing and makes cycles free.
type SimTaskConfig = flavors.SimTaskConfig

// SimEventKind says what a SimEvent records.
type SimEventKind = flavors.SimEventKind

// Trace event kinds; SimEvent.Value holds what each comment says.
const (
	SimStart     = flavors.SimStart     // first cycle released
	SimWake      = flavors.SimWake      // woken for a release; Value: latency
	SimEnd       = flavors.SimEnd       // cycle ended; Value: execution time
	SimPause     = flavors.SimPause     // task suspended by Pause
	SimResume    = flavors.SimResume    // task back in the schedule after Resume
	SimExit      = flavors.SimExit      // task body returned
	SimStall     = flavors.SimStall     // injected stall; Value: delay
	SimOverrun   = flavors.SimOverrun   // injected overrun; Value: extra execution time
	SimClockStep = flavors.SimClockStep // virtual clock jumped; Value: the jump
)

// SimEvent is one entry of the simulation trace.
type SimEvent struct {
	Task  string // "" for events about the whole simulation (clock steps)
	Kind  SimEventKind
	Cycle int64 // the task's cycle number (TaskContext.Cycle)
	Time  int64 // virtual time in nanoseconds
	Value time.Duration
}

// String formats the event as one trace line, e.g.
// "1ms servo #1 wake 20µs".
func (e SimEvent) String() string {
	task := e.Task
	if task == "" {
		task = "-"
	}
	s := fmt.Sprintf("%v %s #%d %s", time.Duration(e.Time), task, e.Cycle, e.Kind)
	if e.Value != 0 || e.Kind == SimWake || e.Kind == SimEnd {
		s += " " + e.Value.String()
	}
	return s
}

// SimTrace is what the simulation recorded.
type SimTrace struct {
	// Events are the most recent events (SimOptions.TraceLimit), oldest
	// first.
	Events []SimEvent
	// Count is the number of events since Open; Digest is a hash of all
	// of them: two runs had identical traces exactly when both match.
	Count  uint64
	Digest uint64
}

// String formats the kept events, one per line.
func (t SimTrace) String() string {
	var b strings.Builder
	for _, e := range t.Events {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// SimController drives the virtual clock of an RT opened on the sim
// flavor. Task bodies run only inside its Advance, AdvanceTo, RunUntil
// and RunCycles calls, one at a time: at each virtual instant the due
// tasks run highest priority first, ties in the order the tasks were
// created, each until its next WaitPeriod. The same program with the same
// SimOptions.Seed gives the same trace on every run and any GOMAXPROCS.
//
// A cycle lasts its declared cost (SimTaskConfig.Cost, zero by default)
// on its task's clock; tasks do not wait for one another's costs, as if
// each had a CPU of its own, unless SimOptions.SharedCPU puts them on one
// (see flavors.Sim for the model). Starting a
// task does not run it: its first cycle is due at the virtual time of
// Start, and runs at the next controller call.
//
// Its methods are for the goroutine that drives the test — one call at a
// time — and must not be called from task bodies. Task lifecycle calls
// (Start, Pause, Resume, Stop, Delete) are deterministic when made from
// that goroutine between controller calls, or from task bodies.
type SimController struct {
	rt  *RT
	sim *flavors.Sim
}

// Sim returns the controller of an RT on the sim flavor, ErrNotSupported
// on any other flavor, ErrClosed once closed.
func (rt *RT) Sim() (*SimController, error) {
	s, ok := rt.flavor.(*flavors.Sim)
	if !ok {
		return nil, fmt.Errorf("rtapi: Sim: the %s flavor has no virtual clock (open with Flavor \"sim\"): %w",
			rt.info.Name, ErrNotSupported)
	}
	if rt.isClosed() {
		return nil, fmt.Errorf("rtapi: Sim: %w", ErrClosed)
	}
	return &SimController{rt: rt, sim: s}, nil
}

// Now is the virtual time in nanoseconds (the same as rt.Now(); the
// package-level rtapi.Now is CLOCK_MONOTONIC, also on sim).
func (c *SimController) Now() int64 { return c.sim.Now() }

// Advance runs the simulation for d of virtual time: every release due up
// to and including Now()+d runs, and Now() is then Now()+d (later when a
// clock step jumped past it). A negative d is ErrInvalid; a task body
// that does not come back to WaitPeriod within SimOptions.HangTimeout of
// real time is an error naming the task (ErrTimeout), after which the
// simulation is unusable.
func (c *SimController) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("rtapi: sim: cannot advance by %v: virtual time only goes forward: %w", d, ErrInvalid)
	}
	return c.AdvanceTo(c.sim.Now() + int64(d))
}

// AdvanceTo runs the simulation until virtual time t (nanoseconds, as
// Now() reads it). A t before Now() is ErrInvalid.
func (c *SimController) AdvanceTo(t int64) error {
	_, err := c.sim.Run(t, nil, "", 0)
	return c.wrap(err)
}

// RunUntil runs the simulation until pred returns true, for at most
// within of virtual time. pred is checked first and then after every
// cycle of every task, on the goroutine of the task that just ran (one at
// a time, so it may read what the bodies write); it must not call the
// controller. When within passes first, RunUntil returns ErrTimeout.
func (c *SimController) RunUntil(pred func() bool, within time.Duration) error {
	if pred == nil {
		panic("rtapi: SimController.RunUntil called with a nil predicate")
	}
	if within < 0 {
		return fmt.Errorf("rtapi: sim: RunUntil within %v: %w", within, ErrInvalid)
	}
	met, err := c.sim.Run(c.sim.Now()+int64(within), pred, "", 0)
	if err != nil {
		return c.wrap(err)
	}
	if !met {
		return fmt.Errorf("rtapi: sim: condition not met within %v of virtual time: %w", within, ErrTimeout)
	}
	return nil
}

// RunCycles runs the simulation until task t has completed n more cycles
// (other tasks run as their releases come due). Virtual time then stands
// at the release of t's last cycle; that cycle's execution time enters
// Stats when its WaitPeriod completes, at the next controller call. A
// task that is not running is ErrState, as is one paused or ended before
// its n cycles; one that does not complete them within RunCyclesBound
// periods per cycle (at least 1 s) of virtual time is ErrTimeout.
func (c *SimController) RunCycles(t *Task, n int64) error {
	if err := c.own(t, "sim run cycles"); err != nil {
		return err
	}
	if n < 0 {
		return taskErrf(t.spec.Name, "sim run cycles", ErrInvalid, "negative cycle count %d", n)
	}
	if s := t.state.Load(); s != stateRunning {
		return taskErrf(t.spec.Name, "sim run cycles", ErrState, "task is %s", stateNames[s])
	}
	if n == 0 {
		return nil
	}
	within := max(RunCyclesBound*time.Duration(n)*t.spec.Period, time.Second)
	met, err := c.sim.Run(c.sim.Now()+int64(within), nil, t.spec.Name, n)
	if errors.Is(err, flavors.ErrSimTaskLeft) {
		return taskErrf(t.spec.Name, "sim run cycles", ErrState, "%v", err)
	}
	if err == nil && !met {
		return taskErrf(t.spec.Name, "sim run cycles", ErrTimeout,
			"%d cycles not completed within %v of virtual time (starved by higher priorities on a SharedCPU?)", n, within)
	}
	return c.wrap(err)
}

// RunCyclesBound is how many periods per requested cycle RunCycles lets
// pass (at least one second of virtual time) before it gives up.
const RunCyclesBound = 100

// SetTask sets what the simulation injects into t — wake-up jitter,
// declared execution cost per cycle, or the real execution time — from
// its next release on (from its first when set before Start).
func (c *SimController) SetTask(t *Task, cfg SimTaskConfig) error {
	if err := c.own(t, "sim set task"); err != nil {
		return err
	}
	return c.wrapTask(t, "sim set task", c.sim.SetTask(t.spec.Name, cfg))
}

// InjectStall delays the release of t's cycle cycle (1 or later, not yet
// released) by periods whole periods, as if the machine had not run the
// thread: Stats then show that lateness and the overruns it causes.
func (c *SimController) InjectStall(t *Task, cycle, periods int64) error {
	if err := c.own(t, "sim inject stall"); err != nil {
		return err
	}
	return c.wrapTask(t, "sim inject stall", c.sim.InjectStall(t.spec.Name, cycle, periods))
}

// InjectOverrun makes t's cycle cycle (not yet run) take extra more
// execution time than declared; extra 0 means one period, so that the
// cycle misses exactly its next release (one overrun in Stats).
func (c *SimController) InjectOverrun(t *Task, cycle int64, extra time.Duration) error {
	if err := c.own(t, "sim inject overrun"); err != nil {
		return err
	}
	return c.wrapTask(t, "sim inject overrun", c.sim.InjectOverrun(t.spec.Name, cycle, extra))
}

// InjectClockStep makes virtual time jump forward by by at instant at (not
// before Now()): nothing runs in between and every task asleep across the
// jump wakes late at its end, as after an SMI or a paused VM. A zero or
// negative step is ErrInvalid: a monotonic clock never goes back.
func (c *SimController) InjectClockStep(at int64, by time.Duration) error {
	return c.wrap(c.sim.InjectClockStep(at, by))
}

// Trace returns the recorded events. Call it between controller calls.
func (c *SimController) Trace() (SimTrace, error) {
	tr, err := c.sim.Trace()
	if err != nil {
		return SimTrace{}, c.wrap(err)
	}
	out := SimTrace{Count: tr.Count, Digest: tr.Digest, Events: make([]SimEvent, len(tr.Records))}
	for i, r := range tr.Records {
		e := SimEvent{Kind: r.Kind, Cycle: r.Cycle, Time: r.Time, Value: time.Duration(r.Value)}
		if r.Thread >= 0 {
			e.Task = tr.Names[r.Thread]
		}
		out.Events[i] = e
	}
	return out, nil
}

// own checks that t is a task of this controller's RT.
func (c *SimController) own(t *Task, op string) error {
	if t == nil {
		return fmt.Errorf("rtapi: %s: nil task: %w", op, ErrInvalid)
	}
	if t.rt != c.rt {
		return taskErrf(t.spec.Name, op, ErrInvalid, "task belongs to another RT")
	}
	return nil
}

// wrap names the hung task in a HangError.
func (c *SimController) wrap(err error) error {
	var h *flavors.HangError
	if errors.As(err, &h) {
		return &TaskError{Task: h.Task, Op: "sim", Err: err}
	}
	if errors.Is(err, flavors.ErrSimBusy) {
		return fmt.Errorf("rtapi: %w: %w", err, ErrState)
	}
	if err != nil {
		return fmt.Errorf("rtapi: %w", err)
	}
	return nil
}

func (c *SimController) wrapTask(t *Task, op string, err error) error {
	if err == nil {
		return nil
	}
	var h *flavors.HangError
	if errors.As(err, &h) || errors.Is(err, flavors.ErrSimBusy) {
		return c.wrap(err)
	}
	return taskErr(t.spec.Name, op, err)
}
