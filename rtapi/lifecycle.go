package rtapi

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/sys"
)

// Pause suspends the task at its next cycle boundary (rtapi_task_pause):
// a running cycle finishes, a sleeping task is parked at once, and the
// body does not run again until Resume. Periods that pass while paused are
// not overruns. A task not running is ErrState.
func (t *Task) Pause() error {
	return t.control("pause", func() error {
		if s := t.state.Load(); s != stateRunning {
			return taskErrf(t.spec.Name, "pause", ErrState, "task is %s", stateNames[s])
		}
		t.ctl.Or(ctlPause)
		t.state.Store(statePaused)
		t.interrupt()
		return nil
	})
}

// Resume lets a paused task run again (rtapi_task_resume) on its period
// grid, from the first grid point after now. A task not paused is ErrState.
func (t *Task) Resume() error {
	return t.control("resume", func() error {
		if s := t.state.Load(); s != statePaused {
			return taskErrf(t.spec.Name, "resume", ErrState, "task is %s, not paused", stateNames[s])
		}
		t.ctl.And(^ctlPause)
		t.state.Store(stateRunning)
		t.poke()
		return nil
	})
}

// Stop asks the task to end: its next WaitPeriod returns false, at once if
// it is paused or sleeping. A task never started is marked done; a stopped
// one is left alone. Stop does not wait; Wait does. It fails only on the
// sim flavor (see Start), where between controller calls it returns once
// the task has ended.
func (t *Task) Stop() error {
	return t.control("stop", func() error {
		switch t.state.Load() {
		case stateCreated:
			t.state.Store(stateDone)
			t.giveBackProc() // counted by another task's Start (procs.go)
			close(t.done)
		case stateRunning, statePaused:
			t.ctl.Or(ctlStop)
			t.state.Store(stateStopping)
			t.poke()
			t.interrupt()
		}
		return nil
	})
}

// control runs f under the task's lock, inside the flavor (Flavor.Enter);
// op names the call in an error.
func (t *Task) control(op string, f func() error) error {
	leave, err := t.rt.flavor.Enter()
	if err != nil {
		return taskErr(t.spec.Name, op, err)
	}
	defer leave()
	t.mu.Lock()
	defer t.mu.Unlock()
	return f()
}

// interrupt cuts short the task's sleep after a control request.
func (t *Task) interrupt() {
	if w := t.tc.waker; w != nil {
		w.Interrupt()
	}
}

func (t *Task) poke() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
	// After the kick: a virtual clock then waits for the task to be back
	// in its schedule, or to have ended.
	if w := t.tc.waker; w != nil {
		w.Kick(t.ctl.Load()&ctlStop != 0)
	}
}

// Wait blocks until the task's body has returned and returns its error: the
// body's own, a *PanicError, ErrGoexit (in a *TaskError), or nil. For a
// task the watchdog faulted it returns the *FaultError once SafeState has
// run, without waiting for the runaway body. Waiting on a task never
// started (nor stopped), or from its own body, is ErrState.
func (t *Task) Wait() error { return t.WaitContext(context.Background()) }

// safeStateOnFault runs SafeState if the watchdog faults the task.
func (t *Task) safeStateOnFault() {
	select {
	case <-t.wd.faultc:
		t.safeState()
	case <-t.done:
	}
}

// safeState runs SafeState if it has not run yet.
func (t *Task) safeState() {
	if t.spec.SafeState == nil || !t.safeRan.CompareAndSwap(false, true) {
		return
	}
	defer close(t.safeDone)
	defer func() {
		if v := recover(); v != nil {
			t.rt.logger.Error("task safe state panicked", zap.String("task", t.spec.Name), zap.Any("panic", v))
		}
	}()
	t.spec.SafeState()
}

// onOwnThread reports whether the caller is the task's own body, which
// would wait for itself forever.
func (t *Task) onOwnThread() bool {
	tid := t.stats.tid.Load()
	return t.rt.traits.OSThreads && tid != 0 && int64(sys.Gettid()) == tid
}

func errOwnBody(t *Task, op string) error {
	return taskErrf(t.spec.Name, op, ErrState, "called from the task's own body, which it would wait for")
}

// result is the task's error; forRun leaves out Start's, which is no
// failure of the running task.
func (t *Task) result(forRun bool) error {
	if t.wd.faulted.Load() {
		return t.wd.fault
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if forRun && t.startFailed {
		return nil
	}
	return t.err
}

// Faulted is closed when the watchdog faults the task.
func (t *Task) Faulted() <-chan struct{} { return t.wd.faultc }

// Done is closed when the task's body has returned.
func (t *Task) Done() <-chan struct{} { return t.done }

func (t *Task) waitDone(d time.Duration) bool {
	select {
	case <-t.done:
		return true
	default:
	}
	timer := time.NewTimer(max(d, 0))
	defer timer.Stop()
	select {
	case <-t.done:
		return true
	case <-t.wd.faultc:
		// A runaway body: waiting longer will not end it.
		select {
		case <-t.done:
			return true
		default:
			return false
		}
	case <-timer.C:
		return false
	}
}

// Delete stops the task, waits for it (rtapi_task_delete) and removes it
// from the instance, freeing its name. ErrTimeout when it does not stop
// within Options.StopTimeout; from the task's own body, ErrState.
func (t *Task) Delete() error {
	if t.onOwnThread() {
		return errOwnBody(t, "delete")
	}
	if err := t.Stop(); err != nil {
		return err
	}
	if !t.waitDone(t.rt.opts.StopTimeout) {
		return taskErrf(t.spec.Name, "delete", ErrTimeout, "did not stop within %v", t.rt.opts.StopTimeout)
	}
	rt := t.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i, o := range rt.tasks {
		if o == t {
			rt.tasks = append(rt.tasks[:i], rt.tasks[i+1:]...)
			break
		}
	}
	return nil
}

func (rt *RT) isClosed() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.closed
}

// Binding reports what the flavor applied to the task's thread; zero
// before Start.
func (t *Task) Binding() Binding {
	t.mu.Lock()
	defer t.mu.Unlock()
	return publicBinding(t.binding)
}

// Tid is the kernel thread id of the task's thread, 0 before Start.
func (t *Task) Tid() int { return int(t.stats.tid.Load()) }
