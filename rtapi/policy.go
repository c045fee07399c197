package rtapi

import (
	"fmt"
	"time"
)

// DeadlinePolicy says when missed deadlines fault a periodic task: after
// MaxOverruns consecutive overruns, or at one wake-up later than MaxLate.
// The task then ends as if stopped, TaskSpec.SafeState runs and Wait
// returns a *DeadlineError. The zero value never faults. The check in the
// cycle allocates nothing.
type DeadlinePolicy struct {
	// MaxOverruns faults the task after this many consecutive cycles whose
	// body ended at or after the cycle's Deadline (the next release). A
	// cycle that ends in time resets the count. 0: no limit.
	MaxOverruns int
	// MaxLate faults the task when a cycle starts more than MaxLate after
	// its release (TaskContext.Late), catching up included. 0: no limit;
	// at most MaxPeriod.
	MaxLate time.Duration
}

// IsZero reports whether the policy never faults.
func (p DeadlinePolicy) IsZero() bool { return p == DeadlinePolicy{} }

// check validates the policy of a task with the given period.
func (p DeadlinePolicy) check(period time.Duration) error {
	switch {
	case p.MaxOverruns < 0:
		return fmt.Errorf("deadline policy: negative MaxOverruns %d: %w", p.MaxOverruns, ErrInvalid)
	case p.MaxLate < 0:
		return fmt.Errorf("deadline policy: negative MaxLate %v: %w", p.MaxLate, ErrInvalid)
	case p.MaxLate > MaxPeriod:
		return fmt.Errorf("deadline policy: MaxLate %v above the maximum %v: %w", p.MaxLate, MaxPeriod, ErrInvalid)
	case !p.IsZero() && period == 0:
		return fmt.Errorf("deadline policy: a task that is not periodic has no deadline: %w", ErrInvalid)
	}
	return nil
}

// DeadlineError is what Wait returns for a task its DeadlinePolicy
// faulted, wrapped in a *TaskError. errors.Is(err, ErrFaulted) is true.
type DeadlineError struct {
	Task   string
	Policy DeadlinePolicy
	// Cycle is the cycle that tripped the policy (TaskContext.Cycle).
	Cycle int64
	// Overruns is the run that tripped MaxOverruns, or Late how late the
	// cycle that tripped MaxLate was woken; the other is zero.
	Overruns int64
	Late     time.Duration
}

func (e *DeadlineError) Error() string {
	if e.Overruns > 0 {
		return fmt.Sprintf("task %q faulted by its deadline policy: %d consecutive overruns at cycle %d (MaxOverruns %d)",
			e.Task, e.Overruns, e.Cycle, e.Policy.MaxOverruns)
	}
	return fmt.Sprintf("task %q faulted by its deadline policy: cycle %d woken %v after its release (MaxLate %v)",
		e.Task, e.Cycle+1, e.Late, e.Policy.MaxLate)
}

// Is makes errors.Is(err, ErrFaulted) true.
func (e *DeadlineError) Is(target error) bool { return target == ErrFaulted }

// overran counts the cycle whose body ended at end and reports whether
// MaxOverruns tripped. Periodic tasks only.
func (tc *TaskContext) overran(end int64) bool {
	if end < tc.release+tc.period+tc.correction {
		tc.overrunRun = 0
		return false
	}
	tc.overrunRun++
	if tc.maxOverruns > 0 && tc.overrunRun >= tc.maxOverruns {
		tc.trip(tc.overrunRun, 0)
		return true
	}
	return false
}

// trip ends the task by its deadline policy, filling in the error built
// at NewTask, so it allocates nothing.
func (tc *TaskContext) trip(overruns, late int64) {
	t := tc.task
	e := t.deadlineErr
	e.Cycle = tc.cycle
	e.Overruns = overruns
	e.Late = time.Duration(late)
	tc.tripped = true
	t.ctl.Or(ctlStop)
}

// Faulted reports whether the task is ending because its DeadlinePolicy
// tripped or the watchdog faulted it; WaitPeriod has then returned false.
// RT-safe.
func (tc *TaskContext) Faulted() bool {
	return tc.tripped || tc.task.ctl.Load()&ctlFault != 0
}
