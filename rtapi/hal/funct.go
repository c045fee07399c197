package hal

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// Func is a function a component exports, called once per cycle of its
// thread with the thread's period and the time the cycle began (ns on the
// flavor's clock). It runs on the real-time thread, so in the steady state
// it must not allocate, lock, block or log.
type Func func(period time.Duration, now int64)

// Funct is an exported function (LinuxCNC's funct), on at most one thread.
type Funct struct {
	name  string
	fn    Func
	cfn   ContextFunc // instead of fn, from ExportContext
	index int         // export order: the function's slot in the stats segment
	slot  *functSlot  // its published counters: in the stats segment when publishing
	pub   *publisher  // the stats segment's, nil when not publishing
	// acct are its counters as the calling thread keeps them: plain
	// fields, touched only by the thread whose chain holds the function
	// (while inUse shows that chain) or, once RemoveFunct saw the thread
	// leave it, under h.mu.
	acct functAcct
	// resets counts the ResetMax calls that zeroed its worst time: the
	// thread's copy (acct.tmax) follows at its next call or publication.
	resets atomic.Int64
	// thread is the thread whose chain holds the function, or whose call
	// of it may still run (removing). Guarded by h.mu.
	thread *Thread
	// times are its .time, .tmax and .tmax-increased (times.go).
	times timeItems
	// removing, while non-zero, is the generation of the last chain of
	// thread that held the function: RemoveFunct timed out waiting for
	// its call to end. Guarded by h.mu.
	removing uint64
}

// functAcct is a function's counters between publications (publishAcct).
type functAcct struct {
	time     int64 // the last call's duration, ns
	tmax     int64 // the worst since the last ResetMax, following .tmax down after a setp
	calls    int64
	overruns int64
	resets   int64 // Funct.resets as last seen
}

// settle frees a function whose removal timed out once its thread runs
// no chain that held it. Under h.mu.
func (f *Funct) settle() {
	if f.removing != 0 && f.thread.passed(f.removing) {
		f.released()
	}
}

// released frees a function no thread can call any longer, publishing
// the counters its last thread kept. Under h.mu.
func (f *Funct) released() {
	f.pub.access(f.publishAcct)
	f.thread, f.removing = nil, 0
}

// Position says where AddFunct puts a function in a thread's chain.
type Position struct {
	index int
	last  bool
}

// Positions; hal_add_funct_to_thread's 1 is First and -1 Last.
var (
	// First puts the function before all others.
	First = Position{index: 0}
	// Last appends it.
	Last = Position{last: true}
)

// At puts the function at index i (0-based) of the chain, before the one
// there now; At(len) appends. AddFunct refuses an index out of range.
func At(i int) Position { return Position{index: i} }

func (p Position) String() string {
	if p.last {
		return "last"
	}
	return fmt.Sprintf("index %d", p.index)
}

// Export registers fn under name (hal_export_funct): unique, at most
// NameLen-1 bytes, no spaces, usually "<component>.<instance>.<what>".
// A nil fn panics.
func (h *HAL) Export(name string, fn Func) (*Funct, error) {
	if fn == nil {
		panic("hal: HAL.Export called with a nil Func")
	}
	return h.export(name, fn, nil, nil)
}

// ExportContext is Export for a ContextFunc. A nil fn panics.
func (h *HAL) ExportContext(name string, fn ContextFunc) (*Funct, error) {
	if fn == nil {
		panic("hal: HAL.ExportContext called with a nil ContextFunc")
	}
	return h.export(name, nil, fn, nil)
}

// export exports a function whose timing items owner owns (nil: the HAL).
func (h *HAL) export(name string, fn Func, cfn ContextFunc, owner *Component) (*Funct, error) {
	const op = "export"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, "", name); err != nil {
		return nil, err
	}
	if err := names.Check("function", name); err != nil {
		return nil, &Error{Op: op, Funct: name, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	if _, dup := h.functs[name]; dup {
		return nil, errf(op, "", name, rtapi.ErrInvalid, "a function of that name is exported")
	}
	if len(h.order) >= MaxExported {
		return nil, errf(op, "", name, rtapi.ErrInvalid, "already %d functions exported, the most one HAL holds", MaxExported)
	}
	f := &Funct{name: name, fn: fn, cfn: cfn, index: h.freeFunctIndex()}
	if h.pub != nil {
		f.slot, f.pub = h.pub.funct(f.index, name), h.pub
	} else {
		f.slot = &functSlot{}
	}
	f.times = h.functTimes(owner, name)
	h.functs[name] = f
	h.order = append(h.order, f)
	return f, nil
}

// Functs lists the exported functions in export order.
func (h *HAL) Functs() []*Funct {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.order)
}

// Funct returns the exported function named name.
func (h *HAL) Funct(name string) (*Funct, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.functs[name]
	return f, ok
}

// AddFunct adds the exported function funct to thread at pos
// (hal_add_funct_to_thread). While the threads run, the function is first
// called at the next cycle boundary. A missing function or thread, a
// function already on a thread, a full chain or a bad pos is ErrInvalid;
// a function whose removal timed out and whose call still runs is ErrBusy.
func (h *HAL) AddFunct(funct, thread string, pos Position) error {
	const op = "add funct"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, thread, funct); err != nil {
		return err
	}
	f, ok := h.functs[funct]
	if !ok {
		return errf(op, thread, funct, rtapi.ErrInvalid, "no function of that name is exported")
	}
	th := h.thread(thread)
	if th == nil {
		return errf(op, thread, funct, rtapi.ErrInvalid, "no such thread (threads: %v)", h.threadNames())
	}
	f.settle()
	if f.removing != 0 {
		return errf(op, thread, funct, rtapi.ErrBusy,
			"the function is being removed from thread %q, whose call of it has not ended", f.thread.name)
	}
	if f.thread != nil {
		return errf(op, thread, funct, rtapi.ErrInvalid, "the function is already on thread %q", f.thread.name)
	}
	old := th.chain.Load().functs
	if len(old) >= MaxFuncts {
		return errf(op, thread, funct, rtapi.ErrInvalid, "the thread already calls %d functions, the most it can", MaxFuncts)
	}
	i := pos.index
	if pos.last {
		i = len(old)
	}
	if i < 0 || i > len(old) {
		return errf(op, thread, funct, rtapi.ErrInvalid, "position %v outside the chain of %d functions", pos, len(old))
	}
	th.swap(slices.Insert(slices.Clone(old), i, f))
	f.thread = th
	return nil
}

// RemoveFunct takes funct off thread (hal_del_funct_from_thread). It
// returns once the thread can no longer call the function, waiting at
// most Options.StopTimeout. On timeout it returns ErrTimeout: the
// function is off the chain, but its call still runs, and it stays the
// thread's until that call ends (AddFunct refuses it meanwhile with
// ErrBusy; RemoveFunct again waits for it).
func (h *HAL) RemoveFunct(funct, thread string) error {
	const op = "remove funct"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkOpen(op, thread, funct); err != nil {
		return err
	}
	th := h.thread(thread)
	if th == nil {
		return errf(op, thread, funct, rtapi.ErrInvalid, "no such thread (threads: %v)", h.threadNames())
	}
	f, ok := h.functs[funct]
	if !ok {
		return errf(op, thread, funct, rtapi.ErrInvalid, "no function of that name is exported")
	}
	// No settle first: a function whose removal from th is pending stays
	// th's (f.thread) until a RemoveFunct sees its call ended and frees
	// it, so a retry after the call ended frees it too.
	if f.thread != th {
		return errf(op, thread, funct, rtapi.ErrInvalid, "the function is not on this thread")
	}
	if f.removing == 0 {
		old := th.chain.Load().functs
		i := slices.Index(old, f)
		f.removing = th.swap(slices.Delete(slices.Clone(old), i, i+1))
	}
	if th.waitPast(f.removing, h.opts.StopTimeout) != nil {
		return errf(op, thread, funct, rtapi.ErrTimeout,
			"the thread did not finish its cycle within %v: the function's call is still running; "+
				"it is off the chain and stays the thread's until that call ends", h.opts.StopTimeout)
	}
	f.released()
	return nil
}

// swap publishes a new chain and returns the replaced generation. Under h.mu.
func (th *Thread) swap(functs []*Funct) (replaced uint64) {
	replaced = th.gen
	th.h.gen++
	th.gen = th.h.gen
	th.chain.Store(&chain{gen: th.gen, functs: functs})
	return replaced
}

// waitPast waits until the thread runs no chain of generation gen or
// older. The thread stores inUse before rechecking its chain (pin), so
// inUse shows the old generation or the thread will load the new chain.
func (th *Thread) waitPast(gen uint64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for spins := 0; ; spins++ {
		if th.passed(gen) {
			return nil
		}
		if spins < 1000 {
			runtime.Gosched()
			continue
		}
		if time.Now().After(deadline) {
			return errf("remove funct", th.name, "", rtapi.ErrTimeout,
				"the thread did not finish its cycle within %v", limit)
		}
		time.Sleep(20 * time.Microsecond) // set-up code, not a real-time path
	}
}

// passed reports whether the thread runs no chain of generation gen or
// older (waitPast).
func (th *Thread) passed(gen uint64) bool {
	g := th.inUse.Load()
	return g == 0 || g > gen
}

// Name is the function's name.
func (f *Funct) Name() string { return f.name }

// FunctStats is a snapshot of a function's timing.
type FunctStats struct {
	Name string
	// Time is the last call's duration (.time), TMax the worst (.tmax).
	Time, TMax time.Duration
	Calls      int64
	// Overruns counts calls that made the thread late (package doc, "Timing").
	Overruns int64
}

// Stats reads the function's counters as its thread last published them:
// exact once the thread stopped or the function was removed; while it
// runs, at most one publication old (every max(1, Options.PublishEvery/
// period) cycles: each cycle of a thread of 1 ms or more by default).
// The function's .time, .tmax and .tmax-increased in the HAL are current
// after each call. Stats works after a truncation too.
func (f *Funct) Stats() FunctStats {
	s := FunctStats{Name: f.name}
	f.pub.access(func() {
		s.Time = time.Duration(atomic.LoadInt64(&f.slot.Time))
		s.TMax = time.Duration(atomic.LoadInt64(&f.slot.TMax))
		s.Calls = atomic.LoadInt64(&f.slot.Calls)
		s.Overruns = atomic.LoadInt64(&f.slot.Overruns)
	})
	return s
}
