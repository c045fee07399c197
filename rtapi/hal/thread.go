package hal

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// RateMonotonic, as ThreadSpec.Priority, has Start assign the thread's
// priority by period: the fastest gets rtapi's highest, each slower one
// the next lower. NewThread uses it.
const RateMonotonic = -1

// ThreadSpec describes a thread. Name, Period and Priority are required.
type ThreadSpec struct {
	// Name: unique among threads and tasks; at most NameLen-1 bytes, no spaces.
	Name string
	// Period: the first thread's sets the base period; later ones are
	// rounded to the nearest whole multiple of it and may not be shorter.
	Period time.Duration
	// Priority is RateMonotonic or in [rt.PrioLowest(), rt.PrioHighest()].
	// 0 is refused (ErrInvalid), not taken as rtapi.TaskSpec's "highest".
	Priority int
	// CPU places the thread's OS thread (rtapi.CPUChoice).
	CPU rtapi.CPUChoice
	// DeadlinePolicy faults the thread after a run of overruns or one
	// wake-up too late: its state becomes "failed", its safe states run
	// and Err returns the *rtapi.DeadlineError (rtapi.ErrFaulted). The
	// zero value never faults.
	DeadlinePolicy rtapi.DeadlinePolicy
}

// Thread is a periodic real-time thread calling a chain of functions
// (hal_create_thread). Its methods are safe for concurrent use; Stats and
// the accessors may be called while it runs.
type Thread struct {
	h         *HAL
	name      string
	nameBuf   [NameLen]byte
	spec      ThreadSpec
	requested time.Duration
	period    time.Duration
	periodNs  int64
	slot      int // index in the stats segment

	prio atomic.Int64 // written with h.mu held, read lock-free

	// Guarded by h.mu.
	task *rtapi.Task
	gen  uint64 // generation of the latest chain

	chain atomic.Pointer[chain] // copy-on-write; loaded once per cycle
	inUse atomic.Uint64         // generation of the chain being run, 0 between cycles

	// Written by the thread only, read by anyone.
	beat     atomic.Int64
	time     atomic.Int64
	tmax     atomic.Int64
	overruns atomic.Int64
	state    atomic.Int64 // stateCreated, stateRunning, ...
	safeRuns atomic.Int64 // runs whose safe states have run

	safe atomic.Pointer[[]safeState] // copy-on-write under h.mu

	times timeItems // .time, .tmax, .threadbeat (times.go)

	// The run's safe states (safe.go). overtaken is set when the safe
	// states run while the body runs (the watchdog, a Stop that timed
	// out): the chain then calls no further function, and the body runs
	// them again as it ends. One atomic load per function call.
	overtaken   atomic.Bool
	safeMu      sync.Mutex // serializes runs of the safe states
	inRun       bool       // guarded by safeMu: the body runs
	safeCounted bool       // guarded by safeMu: this run is counted in safeRuns

	// Owned by the running thread.
	cur          *chain // the chain of the current or last cycle
	at           int    // the index in cur of the function being called, -1 between calls
	inCycle      bool   // between enterCycle and leaveCycle
	finishing    bool   // in finish, before the chain is released
	due, end     int64  // the cycle's deadline and the end of its last call
	fc           FuncContext
	publishEvery int64
	nextPublish  int64
	rec          threadRecord  // scratch for publishing
	seq          *statsSeqlock // nil unless publishing
}

// chain is an immutable list of functions; a change builds a new one.
type chain struct {
	gen    uint64
	functs []*Funct
}

// Thread states, as published.
const (
	stateCreated int64 = iota
	stateRunning
	stateStopped
	stateFailed
)

var stateNames = [...]string{"created", "running", "stopped", "failed"}

func stateName(s int64) string {
	if s < 0 || s >= int64(len(stateNames)) {
		return "unknown"
	}
	return stateNames[s]
}

// NewThread is NewThreadSpec with RateMonotonic priority (hal_create_thread).
func (h *HAL) NewThread(name string, period time.Duration) (*Thread, error) {
	return h.NewThreadSpec(ThreadSpec{Name: name, Period: period, Priority: RateMonotonic})
}

// NewThreadSpec creates a thread, not yet running, and its rtapi task, so
// the name is reserved and the period checked at once. Periods are rounded
// as the package doc says. Threads are created while the HAL is stopped
// (else ErrState).
func (h *HAL) NewThreadSpec(spec ThreadSpec) (*Thread, error) {
	const op = "new thread"
	h.mu.Lock()
	defer h.mu.Unlock()
	name := spec.Name
	if err := h.checkOpen(op, name, ""); err != nil {
		return nil, err
	}
	if h.running {
		return nil, errf(op, name, "", rtapi.ErrState, "threads are running; Stop them first")
	}
	if err := names.Check("thread", name); err != nil {
		return nil, &Error{Op: op, Thread: name, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	if h.thread(name) != nil {
		return nil, errf(op, name, "", rtapi.ErrInvalid, "a thread of that name exists")
	}
	if len(h.threads) >= MaxThreads {
		return nil, errf(op, name, "", rtapi.ErrInvalid, "already %d threads, the most one HAL runs", MaxThreads)
	}
	if spec.Period <= 0 {
		return nil, errf(op, name, "", rtapi.ErrInvalid, "period %v is not positive", spec.Period)
	}
	if p := spec.Priority; p == 0 || p != RateMonotonic && (p < h.rt.PrioLowest() || p > h.rt.PrioHighest()) {
		return nil, errf(op, name, "", rtapi.ErrInvalid, "priority %d: want hal.RateMonotonic or one in [%d, %d]",
			p, h.rt.PrioLowest(), h.rt.PrioHighest())
	}
	period := spec.Period
	if h.base != 0 {
		if period < h.base {
			return nil, errf(op, name, "", rtapi.ErrInvalid,
				"period %v is shorter than the base period %v set by thread %q; create the fastest thread first",
				period, h.base, h.threads[0].name)
		}
		n := (period + h.base/2) / h.base
		period = n * h.base
	}
	th := &Thread{
		h:         h,
		name:      name,
		spec:      spec,
		requested: spec.Period,
		period:    period,
		periodNs:  int64(period),
		slot:      len(h.threads),
	}
	copy(th.nameBuf[:], name)
	h.gen++
	th.chain.Store(&chain{gen: h.gen})
	th.gen = h.gen
	th.publishEvery = max(1, int64(h.opts.PublishEvery/period))
	h.threads = append(h.threads, th)
	h.assignPriorities()
	if err := th.newTask(); err != nil {
		h.threads = h.threads[:len(h.threads)-1]
		h.assignPriorities()
		return nil, &Error{Op: op, Thread: name, Err: err}
	}
	th.times = h.threadTimes(name) // before Start, the thread's first reader
	if h.base == 0 {
		h.base = period
	}
	if h.pub != nil {
		th.seq = h.pub.thread(th.slot)
		h.pub.setThreads(len(h.threads), h.base)
	}
	th.publishIdle(stateCreated)
	if period != spec.Period {
		h.log.Info("hal thread period rounded to a multiple of the base period", zap.String("thread", name),
			zap.Duration("requested", spec.Period), zap.Duration("period", period), zap.Duration("base", h.base))
	}
	return th, nil
}

// newTask creates the thread's rtapi task with its current priority.
func (th *Thread) newTask() error {
	t, err := th.h.rt.NewTask(rtapi.TaskSpec{
		Name:           th.name,
		Priority:       int(th.prio.Load()),
		Period:         th.period,
		CPU:            th.spec.CPU,
		DeadlinePolicy: th.spec.DeadlinePolicy,
		SafeState:      th.runSafeStates,
	}, th.body)
	if err != nil {
		return err
	}
	th.task = t
	return nil
}

// prepareTask replaces a task that ran or whose priority changed.
func (th *Thread) prepareTask() error {
	t := th.task
	if t.State() == rtapi.TaskCreated && int64(t.Spec().Priority) == th.prio.Load() {
		return nil
	}
	if err := t.Delete(); err != nil {
		return &Error{Op: "start", Thread: th.name, Err: err}
	}
	if err := th.newTask(); err != nil {
		return &Error{Op: "start", Thread: th.name, Err: err}
	}
	return nil
}

// Name is the thread's name.
func (th *Thread) Name() string { return th.name }

// Period is the thread's period, after rounding to the base period.
func (th *Thread) Period() time.Duration { return th.period }

// Requested is the period asked for, before rounding.
func (th *Thread) Requested() time.Duration { return th.requested }

// Priority is the given or rate-monotonic priority (final after Start).
func (th *Thread) Priority() int { return int(th.prio.Load()) }

// Task is the thread's current rtapi task (for its Stats); Start replaces it.
func (th *Thread) Task() *rtapi.Task {
	th.h.mu.Lock()
	defer th.h.mu.Unlock()
	return th.task
}

// State is "created", "running", "stopped" or "failed" (a function
// panicked or called runtime.Goexit, or the DeadlinePolicy tripped).
func (th *Thread) State() string { return stateName(th.state.Load()) }

// Done is closed when the thread's current run has ended.
func (th *Thread) Done() <-chan struct{} { return th.Task().Done() }

// Err is the error the thread's last run ended with: a *PanicError when a
// function panicked, an *rtapi.DeadlineError when its DeadlinePolicy
// tripped; nil while it runs or after a clean stop.
func (th *Thread) Err() error {
	t := th.Task()
	select {
	case <-t.Done():
		return t.Wait()
	default:
		return nil
	}
}

// Beat is the thread-beat: the number of cycles completed (one atomic
// load).
// RT-safe.
func (th *Thread) Beat() int64 { return th.beat.Load() }

// Functs lists the names of the thread's functions in calling order.
func (th *Thread) Functs() []string {
	c := th.chain.Load()
	names := make([]string, len(c.functs))
	for i, f := range c.functs {
		names[i] = f.name
	}
	return names
}

// ThreadStats is a snapshot of a thread and its functions (flavor's clock).
type ThreadStats struct {
	Name      string
	Period    time.Duration
	Requested time.Duration
	Priority  int
	State     string
	// Beat counts completed cycles (the thread-beat).
	Beat int64
	// Time is the last cycle's chain time, TMax the worst.
	Time, TMax time.Duration
	// Overruns counts cycles whose chain ended after the next release.
	Overruns int64
	// SafeStateRuns counts the runs whose safe states have run.
	SafeStateRuns int64
	Functs        []FunctStats
}

// Stats reads the thread's live counters and its functions' published
// ones (FunctStats). It allocates.
func (th *Thread) Stats() ThreadStats {
	s := ThreadStats{
		Name:      th.name,
		Period:    th.period,
		Requested: th.requested,
		Priority:  th.Priority(),
		State:     th.State(),
		Beat:      th.beat.Load(),
		Time:      time.Duration(th.time.Load()),
		TMax:      time.Duration(th.tmax.Load()),
		Overruns:  th.overruns.Load(),

		SafeStateRuns: th.safeRuns.Load(),
	}
	for _, f := range th.chain.Load().functs {
		s.Functs = append(s.Functs, f.Stats())
	}
	return s
}

// ResetMax zeroes the thread's and its functions' worst times and their
// .tmax parameters, as setp NAME.tmax 0 does. A cycle running at the
// same moment may write its time back.
func (th *Thread) ResetMax() {
	th.tmax.Store(0)
	th.times.resetMax(th.h.data)
	for _, f := range th.chain.Load().functs {
		f.resets.Add(1) // first: a publication from here on zeroes the thread's copy
		f.pub.access(func() { atomic.StoreInt64(&f.slot.TMax, 0) })
		f.times.resetMax(th.h.data)
	}
}
