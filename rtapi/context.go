package rtapi

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run is a host's main loop: it blocks until ctx is done, RT.Close is
// called, or a task fails (returned an error, panicked, called
// runtime.Goexit or was faulted), then stops every task and closes the RT.
// It returns nil when ctx ended the run and no task failed; otherwise the
// failed tasks' errors, each naming its task, joined with Close's
// (ExampleRT_Run).
//
// Tasks may be created, started and stopped while Run waits; a task that
// ends without error, or a failed Start, does not end the run. Call Run
// once, from an ordinary goroutine. On the sim flavor with no sim.New
// controller, Run closes the RT and returns ErrNotSupported at once.
func (rt *RT) Run(ctx context.Context) error {
	if err := rt.undrivenClock(); err != nil {
		return errors.Join(err, rt.Close())
	}
	for {
		if err := rt.failures(); err != nil {
			return errors.Join(err, rt.Close())
		}
		select {
		case <-ctx.Done():
			return errors.Join(rt.failures(), rt.Close())
		case <-rt.closeBegun:
			// Closed elsewhere: Run waits for that Close to finish.
			return errors.Join(rt.Close(), rt.failures())
		case <-rt.ended:
		}
	}
}

// undrivenClock is Run's error on a virtual clock nothing drives.
func (rt *RT) undrivenClock() error {
	if !rt.traits.VirtualClock {
		return nil
	}
	if d, ok := rt.flavor.(interface{ Driven() bool }); !ok || d.Driven() {
		return nil
	}
	return fmt.Errorf("rtapi: Run: the %s flavor runs tasks only while package rtapi/sim advances its virtual clock, "+
		"and nothing does (no sim.New(rt)), so no task would run a cycle; for real threads unset RTAPI_FLAVOR "+
		"or pass -rtapi.flavor auto: %w", rt.info.Name, ErrNotSupported)
}

// failures joins the errors of the tasks that have failed so far.
func (rt *RT) failures() error {
	var errs []error
	for _, t := range rt.Tasks() {
		select {
		case <-t.done:
		case <-t.wd.faultc:
		default:
			continue
		}
		if err := t.result(true); err != nil {
			errs = append(errs, nameTask(t, err))
		}
	}
	return errors.Join(errs...)
}

// nameTask makes sure err says which task it is about.
func nameTask(t *Task, err error) error {
	var te *TaskError
	var pe *PanicError
	var fe *FaultError
	if errors.As(err, &te) || errors.As(err, &pe) || errors.As(err, &fe) {
		return err
	}
	return &TaskError{Task: t.spec.Name, Op: "run", Err: err}
}

// taskEnded wakes Run after a task ended or was faulted.
func (rt *RT) taskEnded() {
	select {
	case rt.ended <- struct{}{}:
	default:
	}
}

// WaitContext is Wait that stops the task when ctx ends first, then waits
// at most Options.StopTimeout for it (ErrTimeout, the task left running).
// A task stopped because ctx ended returns nil if it ended cleanly. For a
// faulted task it returns once SafeState has run, or when ctx ends.
func (t *Task) WaitContext(ctx context.Context) error {
	if t.state.Load() == stateCreated {
		return taskErrf(t.spec.Name, "wait", ErrState, "task was never started")
	}
	if t.onOwnThread() {
		return errOwnBody(t, "wait")
	}
	select {
	case <-t.done:
	case <-t.wd.faultc:
		if t.spec.SafeState != nil {
			select {
			case <-t.safeDone:
			case <-ctx.Done():
			}
		}
	case <-ctx.Done():
		t.Stop()
		if !t.waitDone(t.rt.opts.StopTimeout) {
			return taskErrf(t.spec.Name, "wait", ErrTimeout, "did not stop within %v after its context ended (%v)",
				t.rt.opts.StopTimeout.Round(time.Millisecond), context.Cause(ctx))
		}
	}
	return t.result(false)
}
