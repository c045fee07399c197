package hal

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// safeState is a registered safe-state function.
type safeState struct {
	name string
	fn   func()
	// SafeP's pin, type and value, for Save; pin is "" for a Go function.
	pin  string
	typ  Type
	word uint64
	// seq orders registrations (HAL.safeSeq): unloadrt removes those its
	// loadrt made. comp is SafeP's pin's component. Set under h.mu.
	seq  uint64
	comp *Component
}

// AddSafeState is Thread.AddSafeState on the thread named thread.
func (h *HAL) AddSafeState(thread, name string, fn func()) error {
	h.mu.Lock()
	th := h.thread(thread)
	names := h.threadNames()
	h.mu.Unlock()
	if th == nil {
		return errf("add safe state", thread, "", rtapi.ErrInvalid, "no such thread (threads: %v)", names)
	}
	return th.AddSafeState(name, fn)
}

// AddSafeState registers fn under name to bring what the thread drives to
// a safe state ("drop amp-enable, zero the DAC outputs"). The safe states
// run in registration order when the run ends (the package doc, "Safe
// states"): on the thread after its last call; when the watchdog faults a
// runaway thread, or Stop gives up on a stuck one, at once on another
// goroutine and again on the thread once the function returns. They are
// the thread's last writes: no function of it is called after they ran.
// Runs never overlap. A safe state must return; one that panics is logged
// and the next one runs; one that faults on a truncated data segment runs
// again, once.
// Registering while the threads run takes effect at once. A nil fn
// panics; a bad name is ErrInvalid.
func (th *Thread) AddSafeState(name string, fn func()) error {
	if fn == nil {
		panic("hal: Thread.AddSafeState called with a nil function")
	}
	return th.addSafeState(safeState{name: name, fn: fn})
}

func (th *Thread) addSafeState(s safeState) error {
	const op = "add safe state"
	name := s.name
	h := th.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, th.name, ""); err != nil {
		return err
	}
	if err := names.Check("safe state", name); err != nil {
		return &Error{Op: op, Thread: th.name, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	var old []safeState
	if p := th.safe.Load(); p != nil {
		old = *p
	}
	if len(old) >= MaxFuncts {
		return errf(op, th.name, "", rtapi.ErrInvalid, "the thread already has %d safe states, the most it can", MaxFuncts)
	}
	h.safeSeq++
	s.seq = h.safeSeq
	list := append(slices.Clone(old), s)
	th.safe.Store(&list)
	return nil
}

// SafeStates lists the names of the thread's safe states in run order.
func (th *Thread) SafeStates() []string {
	var names []string
	if p := th.safe.Load(); p != nil {
		for _, s := range *p {
			names = append(names, s.name)
		}
	}
	return names
}

// runSafeStates is the thread's rtapi SafeState: rtapi runs it once per
// task run, after the body returns, or at once on a goroutine of its own
// when the watchdog faults the task; Stop runs it when the thread would
// not stop. Run while the body runs, it first stops the chain (overtaken),
// and the body runs the safe states again as it ends (endRun). Only the
// first run of a task run counts in safeRuns.
func (th *Thread) runSafeStates() {
	th.safeMu.Lock()
	defer th.safeMu.Unlock()
	if th.inRun {
		th.overtaken.Store(true)
	} else if th.overtaken.Load() {
		return // endRun ran them after the body's last call
	}
	th.runSafeStatesLocked()
	if !th.safeCounted {
		th.safeCounted = true
		th.safeRuns.Add(1)
	}
}

// runSafeStatesLocked runs the safe states in order. Under safeMu.
func (th *Thread) runSafeStatesLocked() {
	if p := th.safe.Load(); p != nil {
		for _, s := range *p {
			th.runSafeState(s)
		}
	}
}

// beginRun starts a task run, on the thread before its first cycle.
func (th *Thread) beginRun() {
	th.safeMu.Lock()
	defer th.safeMu.Unlock()
	th.inRun = true
	th.safeCounted = false
	th.overtaken.Store(false)
}

// endRun ends a task run, on the thread after its last call. If the safe
// states ran meanwhile, a function still running then (the runaway) may
// have written its pins after them: they run again, last.
func (th *Thread) endRun() {
	th.safeMu.Lock()
	defer th.safeMu.Unlock()
	th.inRun = false
	if th.overtaken.Load() {
		th.runSafeStatesLocked()
	}
}

func (th *Thread) runSafeState(s safeState) {
	defer func() {
		if v := recover(); v != nil {
			th.h.log.Error("hal safe state panicked", zap.String("thread", th.name),
				zap.String("safe_state", s.name), zap.Any("panic", v))
		}
	}()
	th.h.data.access(s.fn)
}

// SafeP adds to thread's safe states one that sets pin to value (halfile's
// "safep THREAD PIN VALUE"), storing into the word the pin reads then, its
// signal's when linked. The value is parsed now (ParseValue); a missing
// thread or pin or a bad value is ErrInvalid.
func (h *HAL) SafeP(thread, pin, value string) error {
	const op = "safep"
	h.mu.Lock()
	p, ok := h.pins[pin]
	h.mu.Unlock()
	if !ok {
		return errf(op, thread, "", rtapi.ErrInvalid, "pin %q does not exist", pin)
	}
	w, err := ParseValue(p.typ, value)
	if err != nil {
		return &Error{Op: op, Thread: thread, Err: fmt.Errorf("pin %q: %w", pin, err)}
	}
	h.mu.Lock()
	th := h.thread(thread)
	names := h.threadNames()
	h.mu.Unlock()
	if th == nil {
		return errf(op, thread, "", rtapi.ErrInvalid, "no such thread (threads: %v)", names)
	}
	return th.addSafeState(safeState{name: pin, fn: func() { atomic.StoreUint64(p.ref.Load(), w) }, pin: pin, typ: p.typ, word: w, comp: p.comp})
}
