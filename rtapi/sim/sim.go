// Package sim is the sim flavor and drives an RT opened on it: virtual
// time for unit tests of servo code, with no root, no real-time kernel
// and no flakiness. Importing it registers flavor "sim" with rtapi, as a
// database/sql driver does.
//
//	rt, err := rtapi.Open(rtapi.Options{Flavor: "sim", Sim: &rtapi.SimOptions{Seed: 1}})
//	...
//	clock, err := sim.New(rt)
//	err = clock.SetTask(servo, sim.TaskConfig{Jitter: sim.NormalJitter(20*time.Microsecond, 5*time.Microsecond)})
//	err = clock.Advance(10 * time.Second) // ten simulated seconds, in milliseconds of real time
//
// Task bodies run only inside the Controller's Advance, AdvanceTo,
// RunUntil and RunCycles calls, one at a time: at each virtual instant the
// due tasks run highest priority first, ties in creation order, each until
// its next WaitPeriod. The same program with the same
// rtapi.SimOptions.Seed gives the same Trace on every run and any
// GOMAXPROCS. Wake-up jitter comes from a distribution or replays a
// histogram recorded on a real machine (HistogramJitter, rtapi/latencyfile).
//
// Instants are int64 nanoseconds of the virtual clock (rt.Now(),
// TaskContext.Now); spans are time.Duration. Errors match the rtapi
// sentinels.
package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/rtapi"
)

// Controller drives the virtual clock of an RT opened on the sim flavor.
//
// A cycle lasts its declared cost (TaskConfig.Cost, zero by default) on its
// task's clock; each task has a CPU of its own unless
// rtapi.SimOptions.SharedCPU puts them on one. A task's first cycle is due
// at the virtual time of Start and runs at the next controller call.
//
// Its methods are for the goroutine that drives the test, one call at a
// time; from a task body they return rtapi.ErrState. Task lifecycle calls
// (Start, Pause, Resume, Stop, Delete) come from task bodies and
// RunUntil's predicate while a controller call runs, and from any
// goroutine, one at a time, between controller calls; any other call is
// rtapi.ErrState. A Stop between controller calls returns once the body
// has run to its end, in virtual time.
type Controller struct {
	rt  *rtapi.RT
	sim *engine
}

// New returns a controller of rt's virtual clock: rtapi.ErrNotSupported
// when rt runs on another flavor, rtapi.ErrClosed once rt is closed. All
// controllers of one RT drive the same clock.
func New(rt *rtapi.RT) (*Controller, error) {
	if rt == nil {
		return nil, fmt.Errorf("sim.New: nil RT: %w", rtapi.ErrInvalid)
	}
	f, err := backend.FlavorOf(rt)
	if err != nil {
		return nil, fmt.Errorf("sim.New: %w", err)
	}
	s, ok := f.(*engine)
	if !ok {
		return nil, fmt.Errorf("sim.New: the %s flavor has no virtual clock (open with Flavor \"sim\"): %w",
			rt.Flavor().Name, rtapi.ErrNotSupported)
	}
	s.setOrder(func() []string {
		tasks := rt.Tasks()
		names := make([]string, len(tasks))
		for i, t := range tasks {
			names[i] = t.Name()
		}
		return names
	})
	s.Drive()
	return &Controller{rt: rt, sim: s}, nil
}

// Now is the virtual time in nanoseconds (the same as rt.Now()).
func (c *Controller) Now() int64 { return c.sim.Now() }

// Advance runs every release due up to and including Now()+d; Now() is
// then Now()+d (later if a clock step jumped past it). A negative d is
// rtapi.ErrInvalid. A body that does not return to WaitPeriod within
// rtapi.SimOptions.HangTimeout of real time is an error naming the task
// (rtapi.ErrTimeout), and the simulation is then unusable.
func (c *Controller) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: cannot advance by %v: virtual time only goes forward: %w", d, rtapi.ErrInvalid)
	}
	return c.AdvanceTo(c.sim.Now() + int64(d))
}

// AdvanceTo runs until virtual time t; a t before Now() is rtapi.ErrInvalid.
func (c *Controller) AdvanceTo(t int64) error {
	_, err := c.sim.Run(t, nil, "", 0)
	return err
}

// RunUntil runs the simulation until pred returns true, for at most
// within of virtual time, else rtapi.ErrTimeout. pred is checked first and
// after every cycle, on the goroutine of the task that just ran, so it may
// read what the bodies write; it must not call the controller.
func (c *Controller) RunUntil(pred func() bool, within time.Duration) error {
	if pred == nil {
		panic("sim: Controller.RunUntil called with a nil predicate")
	}
	if within < 0 {
		return fmt.Errorf("sim: RunUntil within %v: %w", within, rtapi.ErrInvalid)
	}
	met, err := c.sim.Run(c.sim.Now()+int64(within), pred, "", 0)
	if err != nil {
		return err
	}
	if !met {
		return fmt.Errorf("sim: condition not met within %v of virtual time: %w", within, rtapi.ErrTimeout)
	}
	return nil
}

// RunCyclesBound is how many periods per requested cycle RunCycles lets
// pass (at least one second of virtual time) before it gives up.
const RunCyclesBound = 100

// RunCycles runs the simulation until task t has completed n more cycles.
// Virtual time then stands at the release of t's last cycle, whose
// execution time enters Stats at the next controller call. A task not
// running, or paused or ended before its n cycles, is rtapi.ErrState; one
// that takes longer than RunCyclesBound periods per cycle (at least 1 s)
// is rtapi.ErrTimeout.
func (c *Controller) RunCycles(t *rtapi.Task, n int64) error {
	const op = "sim run cycles"
	if err := c.own(t, op); err != nil {
		return err
	}
	if n < 0 {
		return taskErr(t, op, fmt.Errorf("negative cycle count %d: %w", n, rtapi.ErrInvalid))
	}
	if s := t.State(); s != rtapi.TaskRunning {
		return taskErr(t, op, fmt.Errorf("task is %s: %w", s, rtapi.ErrState))
	}
	if n == 0 {
		return nil
	}
	period := t.Spec().Period
	within := max(RunCyclesBound*time.Duration(n)*period, time.Second)
	met, err := c.sim.Run(c.sim.Now()+int64(within), nil, t.Name(), n)
	if errors.Is(err, errTaskLeft) {
		return taskErr(t, op, err)
	}
	if err == nil && !met {
		return taskErr(t, op, fmt.Errorf("%d cycles not completed within %v of virtual time "+
			"(starved by higher priorities on a SharedCPU?): %w", n, within, rtapi.ErrTimeout))
	}
	return err
}

// SetTask sets t's injections from its next release (its first, before Start).
func (c *Controller) SetTask(t *rtapi.Task, cfg TaskConfig) error {
	return c.onTask(t, "sim set task", func() error { return c.sim.SetTask(t.Name(), cfg) })
}

// InjectStall delays the release of t's cycle cycle (1 or later, not yet
// released) by periods whole periods, as if the machine had stalled.
func (c *Controller) InjectStall(t *rtapi.Task, cycle, periods int64) error {
	return c.onTask(t, "sim inject stall", func() error { return c.sim.InjectStall(t.Name(), cycle, periods) })
}

// InjectOverrun makes t's cycle cycle (not yet run) take extra more
// execution time; extra 0 means one period: exactly one overrun.
func (c *Controller) InjectOverrun(t *rtapi.Task, cycle int64, extra time.Duration) error {
	return c.onTask(t, "sim inject overrun", func() error { return c.sim.InjectOverrun(t.Name(), cycle, extra) })
}

// InjectClockStep makes virtual time jump forward by by at instant at (not
// before Now()), as after an SMI or a paused VM: every task asleep across
// the jump wakes late at its end. A step <= 0 is rtapi.ErrInvalid.
func (c *Controller) InjectClockStep(at int64, by time.Duration) error {
	return c.sim.InjectClockStep(at, by)
}

// Trace returns the recorded events. Call it between controller calls.
func (c *Controller) Trace() (Trace, error) {
	return c.sim.Trace()
}

// own checks that t is one of this controller's RT's tasks.
func (c *Controller) own(t *rtapi.Task, op string) error {
	if t == nil {
		return fmt.Errorf("sim: %s: nil task: %w", op, rtapi.ErrInvalid)
	}
	if !slices.Contains(c.rt.Tasks(), t) {
		return taskErr(t, op, fmt.Errorf("task belongs to another RT, or was deleted: %w", rtapi.ErrInvalid))
	}
	return nil
}

// onTask runs call on c's task t, naming t in its error unless the error
// already names a task or is errBusy.
func (c *Controller) onTask(t *rtapi.Task, op string, call func() error) error {
	if err := c.own(t, op); err != nil {
		return err
	}
	err := call()
	var te *rtapi.TaskError
	if err == nil || errors.As(err, &te) || errors.Is(err, errBusy) {
		return err
	}
	return taskErr(t, op, err)
}

func taskErr(t *rtapi.Task, op string, err error) error {
	return &rtapi.TaskError{Task: t.Name(), Op: op, Err: err}
}

// TaskConfig is a task's injections; the zero value injects nothing.
type TaskConfig struct {
	// Jitter is the wake-up lateness added to each release.
	Jitter Jitter
	// Cost is each cycle's declared execution time; over a period, it overruns.
	Cost time.Duration
	// RealExec charges the body's real time instead of Cost: not reproducible.
	RealExec bool
}

// EventKind says what an Event records.
type EventKind uint8

// Trace event kinds; Event.Value holds what each comment says.
const (
	Start     EventKind = iota + 1 // first cycle released
	Wake                           // woken for a release; Value: latency
	End                            // cycle ended; Value: execution time
	Pause                          // task suspended by Pause
	Resume                         // task back in the schedule after Resume
	Exit                           // task body returned
	Stall                          // injected stall; Value: delay
	Overrun                        // injected overrun; Value: extra execution time
	ClockStep                      // virtual clock jumped; Value: the jump
)

var eventNames = [...]string{"", "start", "wake", "end", "pause", "resume", "exit", "stall", "overrun", "clock-step"}

// String is the kind's name in a trace line: "start", "wake", ...
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one entry of the simulation trace.
type Event struct {
	Task  string // "" for events about the whole simulation (clock steps)
	Kind  EventKind
	Cycle int64 // the task's cycle number (TaskContext.Cycle)
	Time  int64 // virtual time in nanoseconds
	Value time.Duration
}

// String formats the event as a trace line, e.g. "1ms servo #1 wake 20µs".
func (e Event) String() string {
	s := fmt.Sprintf("%v %s #%d %s", time.Duration(e.Time), cmp.Or(e.Task, "-"), e.Cycle, e.Kind)
	if e.Value != 0 || e.Kind == Wake || e.Kind == End {
		s += " " + e.Value.String()
	}
	return s
}

// Trace is what the simulation recorded.
type Trace struct {
	// Events are the last TraceLimit events (rtapi.SimOptions), oldest first.
	Events []Event
	// Count is the events since Open; equal Digests mean identical traces.
	Count  uint64
	Digest uint64
}

// String formats the kept events, one per line.
func (t Trace) String() string {
	var b strings.Builder
	for _, e := range t.Events {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}
