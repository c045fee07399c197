package rtapi

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/spinguard"
	"github.com/gortapi/gortapi/internal/sys"
)

// DefaultSpinBound is how long a SCHED_FIFO task's thread may keep its CPU
// without a context switch before the spin guard demotes it
// (Options.SpinGuard); a task's bound is this or its period if longer.
const DefaultSpinBound = 3 * time.Millisecond

// spinGuardTick is how often the guard looks at the watched threads.
const spinGuardTick = time.Millisecond

// spinBound is a task's bound: a body may run most of its period.
func spinBound(spec TaskSpec) time.Duration { return max(DefaultSpinBound, spec.Period) }

// spinGuardState is an RT's spin guard, started by its first real-time task.
type spinGuardState struct {
	mu      sync.Mutex // serialises start and close
	guard   *spinguard.Guard
	err     error // why it did not start; kept so that it is tried once
	tried   bool
	closed  bool
	warned  sync.Map // task name -> struct{}: first demotion logged
	byTid   sync.Map // tid -> *Task
	watchdg sync.Map // tid -> struct{}: the watchdog thread
}

// startSpinGuard starts rt's spin guard once. It fails only when
// Options.SpinGuard is On and the guard cannot run; Auto warns instead.
func (rt *RT) startSpinGuard() error {
	if rt.opts.SpinGuard == Off || !rt.info.RealTime || !rt.traits.OSThreads {
		return nil
	}
	s := &rt.spin
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if !s.tried {
		s.tried = true
		prio := min(WatchdogPriority, rt.PrioHighest()+1)
		s.guard, s.err = spinguard.Start(prio, spinGuardTick, rt.spinEvent, func(err error) {
			rt.logger.Error("spin guard ended on its own: tasks that spin in the Go runtime are no longer bounded", zap.Error(err))
		})
		if s.err != nil && rt.opts.SpinGuard != On {
			rt.logger.Warn("spin guard did not start: a task thread that spins in the Go runtime can stall the task set until RT throttling (docs/GC.md)",
				zap.Error(s.err))
		}
	}
	if s.err != nil && rt.opts.SpinGuard == On {
		return fmt.Errorf("%w (Options.SpinGuard is on): %w", ErrNotSupported, s.err)
	}
	return nil
}

// guardTask puts t's real-time thread under the spin guard, if one runs.
// Called on the task's thread before Start returns.
func (t *Task) guardTask() {
	if t.binding.Policy != sys.SchedFIFO && t.binding.Policy != sys.SchedRR {
		return
	}
	s := &t.rt.spin
	s.mu.Lock()
	g := s.guard
	s.mu.Unlock()
	if g == nil {
		return
	}
	s.byTid.Store(t.binding.Tid, t)
	t.guarded = g
	if err := g.Watch(t.binding.Tid, t.binding.Priority, spinBound(t.spec)); err != nil {
		t.rt.logger.Warn("spin guard cannot watch the task", zap.String("task", t.spec.Name), zap.Error(err))
	}
}

// unguardTask takes t's thread off the spin guard, before the thread ends
// (its tid may be reused) or the watchdog demotes it. It neither allocates
// nor blocks.
func (t *Task) unguardTask() {
	if g := t.guarded; g != nil {
		_ = g.Unwatch(t.binding.Tid)
	}
}

// spinEvent is the guard's report, on a goroutine of its own.
func (rt *RT) spinEvent(e spinguard.Event) {
	v, ok := rt.spin.byTid.Load(e.Tid)
	if !ok {
		if _, wd := rt.spin.watchdg.Load(e.Tid); wd && e.Demoted {
			rt.logger.Warn("spin guard: the watchdog thread kept its CPU without a break; demoted until it yields",
				zap.Int("tid", e.Tid), zap.Duration("ran", e.Ran))
		}
		return
	}
	t := v.(*Task)
	switch {
	case e.Err != nil:
		if t.state.Load() == stateDone && (errors.Is(e.Err, syscall.ENOENT) || errors.Is(e.Err, syscall.ESRCH)) {
			return // ended before the guard got to it
		}
		rt.logger.Warn("spin guard", zap.String("task", t.spec.Name), zap.Int("tid", e.Tid), zap.Error(e.Err))
	case e.Demoted:
		t.stats.spinBreaks.Add(1)
		if _, seen := rt.spin.warned.LoadOrStore(t.spec.Name, struct{}{}); !seen {
			rt.logger.Warn("spin guard: task thread kept its CPU without a break; demoted to SCHED_OTHER until it yields (Stats.SpinBreaks counts each time)",
				zap.String("task", t.spec.Name), zap.Int("tid", e.Tid), zap.Duration("ran", e.Ran),
				zap.Duration("bound", spinBound(t.spec)))
		}
	}
}

// closeSpinGuard ends rt's spin guard, once the tasks have ended.
func (rt *RT) closeSpinGuard() error {
	s := &rt.spin
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.guard == nil {
		return nil
	}
	if err := s.guard.Close(); err != nil {
		return fmt.Errorf("rtapi: close spin guard: %w", err)
	}
	return nil
}
