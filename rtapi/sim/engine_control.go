package sim

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/gortapi/gortapi/rtapi"
)

// The controller. One controller or lifecycle call holds the simulation
// at a time (ctlHeld); a controller call while Run runs could only
// deadlock, and is refused.

// acquire takes the simulation for a controller call, waiting for an idle
// call to finish; while Run runs it returns errBusy. Returns with mu held.
func (s *engine) acquire(run bool) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errBusy
	}
	for s.ctlHeld {
		s.cond.Wait()
	}
	if err := s.unusable(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.ctlHeld, s.running = true, run
	return nil
}

// release gives the simulation back after a controller call. Takes mu.
func (s *engine) release() {
	s.mu.Lock()
	s.ctlHeld, s.running, s.ctlGoid = false, false, 0
	s.cond.Broadcast()
	s.mu.Unlock()
}

// usable is nil, or why the simulation cannot run any more.
func (s *engine) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unusable()
}

// unusable is usable's answer, under mu.
func (s *engine) unusable() error {
	if s.closed {
		return errClosed
	}
	return s.broken
}

// idle runs fn with the simulation idle and settled, under mu.
func (s *engine) idle(fn func() error) error {
	if err := s.acquire(false); err != nil {
		return err
	}
	defer func() {
		s.ctlHeld = false
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	return fn()
}

// plan returns the injection plan for name, creating it. Under mu.
func (s *engine) plan(name string) *simTaskState {
	p := s.plans[name]
	if p == nil {
		p = &simTaskState{}
		s.plans[name] = p
	}
	return p
}

// live returns the bound, not yet exited thread of name. Under mu.
func (s *engine) live(name string) *simThread {
	for i := len(s.threads) - 1; i >= 0; i-- {
		if th := s.threads[i]; th.name == name && !th.exited {
			return th
		}
	}
	return nil
}

// SetTask sets task name's injections, now if it runs and at each start.
func (s *engine) SetTask(name string, cfg TaskConfig) error {
	if cfg.Cost < 0 {
		return fmt.Errorf("sim: task %q: negative cost %v: %w", name, cfg.Cost, rtapi.ErrInvalid)
	}
	if err := cfg.Jitter.validate(); err != nil {
		return fmt.Errorf("sim: task %q: %w", name, err)
	}
	return s.idle(func() error {
		p := s.plan(name)
		p.cfg = cfg
		if th := s.live(name); th != nil {
			th.cost = int64(cfg.Cost)
			th.realExec = cfg.RealExec
			th.jitter.set(cfg.Jitter)
		}
		return nil
	})
}

// InjectStall delays cycle cycle (>= 1) of task name by periods periods.
func (s *engine) InjectStall(name string, cycle, periods int64) error {
	if cycle < 1 || periods < 1 {
		return fmt.Errorf("sim: task %q: stall of %d periods at cycle %d: cycle and periods must be at least 1: %w",
			name, periods, cycle, rtapi.ErrInvalid)
	}
	return s.inject(name, cycle, periods, false)
}

// InjectOverrun adds extra (0: a period) to cycle cycle (>= 0) of task name.
func (s *engine) InjectOverrun(name string, cycle int64, extra time.Duration) error {
	if cycle < 0 || extra < 0 {
		return fmt.Errorf("sim: task %q: overrun %v at cycle %d: %w", name, extra, cycle, rtapi.ErrInvalid)
	}
	return s.inject(name, cycle, int64(extra), true)
}

func (s *engine) inject(name string, cycle, value int64, overrun bool) error {
	return s.idle(func() error {
		th := s.live(name)
		if th != nil && cycle < th.cycles+1 && !(overrun && cycle == th.cycles) {
			return fmt.Errorf("sim: task %q: cycle %d has already run (now at cycle %d): %w",
				name, cycle, th.cycles, rtapi.ErrInvalid)
		}
		p := s.plan(name)
		f := simFault{cycle: cycle, value: value}
		if overrun {
			p.overruns = insertFault(p.overruns, f)
		} else {
			p.stalls = insertFault(p.stalls, f)
		}
		if th != nil {
			if overrun {
				th.overruns = insertFault(th.overruns[th.oi:], f)
				th.oi = 0
			} else {
				th.stalls = insertFault(th.stalls[th.si:], f)
				th.si = 0
			}
		}
		return nil
	})
}

// insertFault returns a copy of fs with f after those of its cycle or earlier.
func insertFault(fs []simFault, f simFault) []simFault {
	i := 0
	for i < len(fs) && fs[i].cycle <= f.cycle {
		i++
	}
	return slices.Insert(slices.Clone(fs), i, f)
}

// InjectClockStep is Controller.InjectClockStep.
func (s *engine) InjectClockStep(at int64, by time.Duration) error {
	if by <= 0 {
		return fmt.Errorf("sim: clock step by %v: only forward steps exist on a monotonic clock: %w", by, rtapi.ErrInvalid)
	}
	return s.idle(func() error {
		if at < s.now.Load() {
			return fmt.Errorf("sim: clock step at %v is before the virtual time %v: %w",
				time.Duration(at), time.Duration(s.now.Load()), rtapi.ErrInvalid)
		}
		i := 0
		for i < len(s.steps) && s.steps[i].at <= at {
			i++
		}
		s.steps = slices.Insert(s.steps, i, clockStep{at, int64(by)})
		return nil
	})
}

// Run runs every release due up to and including target, stopping early
// when pred returns true after a cycle or the task named goal has
// completed goalCycles more cycles. It returns whether it stopped so; an
// error when the simulation is closed, a task hung or the goal task left
// the schedule (errTaskLeft).
func (s *engine) Run(target int64, pred func() bool, goal string, goalCycles int64) (bool, error) {
	if err := s.acquire(true); err != nil {
		return false, err
	}
	if pred != nil {
		s.ctlGoid = goid() // pred runs here first, and may make lifecycle calls
	}
	s.mu.Unlock()
	defer s.release()
	if target < s.now.Load() {
		return false, fmt.Errorf("sim: cannot go back from %v to %v: %w",
			time.Duration(s.now.Load()), time.Duration(target), rtapi.ErrInvalid)
	}
	if s.pending {
		s.merge()
	}
	s.target, s.exclude = target, false
	s.stopNow, s.pred, s.goal, s.lost = false, pred, nil, ""
	if goal != "" {
		s.mu.Lock()
		th := s.live(goal)
		suspended := th != nil && th.suspended
		s.mu.Unlock()
		if th == nil {
			return false, fmt.Errorf("sim: task %q is not running: %w", goal, rtapi.ErrInvalid)
		}
		if suspended {
			return false, fmt.Errorf("sim: task %q is paused: %w", goal, errTaskLeft)
		}
		s.goal, s.goalN = th, th.cycles+goalCycles
	}
	s.checking = s.pred != nil || s.goal != nil
	defer func() { s.pred, s.goal, s.checking = nil, nil, false }()
	if pred != nil && pred() {
		return true, nil
	}
	if s.goal != nil && s.goal.cycles >= s.goalN {
		return true, nil
	}
	if next := s.pick(); next != nil {
		s.handoff(next)
		if err := s.await(); err != nil {
			return false, err
		}
	}
	if s.dead.Load() {
		return false, s.usable()
	}
	if s.stopNow {
		s.stopNow = false
		if s.lost != "" {
			return false, fmt.Errorf("sim: task %q %s before completing its cycles: %w", goal, s.lost, errTaskLeft)
		}
		return true, nil
	}
	// Nothing more is due up to target: steps before it still happen.
	for len(s.steps) > 0 && s.steps[0].at <= target {
		s.applyStep()
	}
	if target > s.now.Load() {
		s.now.Store(target)
	}
	return false, nil
}

// await waits for the turn to come back to the controller. If nothing
// progresses (no hand-off, no clock move) for the hang timeout, it breaks
// the simulation with an rtapi.TaskError naming the holder
// (rtapi.ErrTimeout).
func (s *engine) await() error {
	last, lastNow := s.progress.Load(), s.now.Load()
	timer := time.NewTimer(s.hang)
	defer timer.Stop()
	for {
		select {
		case <-s.back:
			return nil
		case <-timer.C:
		}
		if p, n := s.progress.Load(), s.now.Load(); p != last || n != lastNow {
			last, lastNow = p, n
			timer.Reset(s.hang)
			continue
		}
		err := &rtapi.TaskError{Op: "sim", Err: fmt.Errorf("did not reach WaitPeriod within %v of real time "+
			"(released at virtual time %v): its body never yields: %w", s.hang, time.Duration(s.now.Load()), rtapi.ErrTimeout)}
		if th := s.holder.Load(); th != nil {
			err.Task = th.name // set before the thread was given the turn
		}
		s.mu.Lock()
		s.broken = err
		s.die()
		s.mu.Unlock()
		return err
	}
}

// Trace copies the trace. Call it between controller calls.
func (s *engine) Trace() (Trace, error) {
	var tr Trace
	err := s.idle(func() error {
		tr.Count, tr.Digest = s.count, s.digest
		n := min(s.count, uint64(max(s.limit, 0)))
		tr.Events = make([]Event, 0, n)
		for i := s.count - n; i < s.count; i++ {
			tr.Events = append(tr.Events, s.ring[i&uint64(len(s.ring)-1)])
		}
		return nil
	})
	return tr, err
}

// errForeign refuses a lifecycle call from a goroutine not running tasks.
var errForeign = fmt.Errorf("sim: task lifecycle call from another goroutine while the controller runs tasks "+
	"(call it from a task body, or between controller calls): %w", rtapi.ErrState)

// Enter admits a lifecycle call (Start, Pause, Resume, Stop) whose
// goroutine (goid) owns the simulation: it has the turn or holds it.
// Otherwise it waits for an idle controller call to end and takes the
// simulation, or returns errForeign while tasks run. A dead simulation
// admits all.
func (s *engine) Enter() (leave func(), err error) {
	g := goid()
	s.mu.Lock()
	for {
		if s.dead.Load() {
			s.mu.Unlock()
			return func() {}, nil
		}
		if s.ctlHeld {
			if th := s.holder.Load(); th != nil && th.goid == g || th == nil && s.ctlGoid == g {
				s.mu.Unlock()
				return func() {}, nil
			}
		}
		if s.running {
			s.mu.Unlock()
			return nil, errForeign
		}
		if !s.ctlHeld {
			break
		}
		s.cond.Wait()
	}
	s.ctlHeld, s.ctlGoid = true, g
	s.mu.Unlock()
	return s.leave, nil
}

// leave ends a lifecycle call made between controller calls: the tasks it
// stopped run alone, in virtual time, until they exit or give the turn
// back. One that hangs breaks the simulation for the next call.
func (s *engine) leave() {
	if len(s.kicks) > 0 && !s.dead.Load() {
		s.mu.Lock()
		s.running = true
		s.mu.Unlock()
		s.exclude = true
		if next := s.pick(); next != nil {
			s.handoff(next)
			_ = s.await()
		}
		s.exclude = false
	}
	s.release()
}

// goid is the caller's goroutine id, from "goroutine 18 [running]:".
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = b[len("goroutine "):]
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
