package rtapi

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// control bits, read by the task once per cycle (HACKING.md, "The
// control word")
const (
	ctlStop  = backend.ControlStop
	ctlPause = backend.ControlPause
	ctlFault = ctlPause << 1 // set when the watchdog faults the task
	ctlBody  = ctlFault << 1 // set by the task while its body runs a cycle

	ctlRequests = ctlStop | ctlPause | ctlFault
)

// Task is a real-time task (rtapi_task_new). It is created paused; Start
// runs it. Its methods are safe for concurrent use from any goroutine;
// they take locks, so call them from outside task bodies.
type Task struct {
	rt   *RT
	spec TaskSpec
	cpus []int
	body func(*TaskContext) error

	mu          sync.Mutex // serialises lifecycle calls
	state       atomic.Int32
	ctl         atomic.Uint32
	kick        chan struct{} // wakes a paused task
	done        chan struct{} // closed when the body has returned
	err         error         // the body's result, set before done closes
	startFailed bool          // err is Start's, not a failure for RT.Run; guarded by mu

	binding backend.Binding
	stats   taskStats
	tc      TaskContext
	wd      taskWatch              // guard.go
	ownP    atomic.Pointer[string] // Stats.OwnP (procs.go)
	spare   bool                   // counted in spareProcs (procs.go); guarded by spareProcs.mu
	fifo    bool                   // counted in runtimeFIFO until finish (runtimefifo.go)

	deadlineErr *DeadlineError // built at NewTask, filled in when the policy trips
	safeRan     atomic.Bool    // SafeState has been claimed
	safeDone    chan struct{}  // closed once SafeState has run
}

// NewTask creates a task, paused, on rt (rtapi_task_new). body runs on the
// task's own OS thread once Start is called; a periodic body loops on
// tc.WaitPeriod(). A spec field out of range, or a name in use, is
// ErrInvalid; after Close, ErrClosed. A nil body panics.
func (rt *RT) NewTask(spec TaskSpec, body func(tc *TaskContext) error) (*Task, error) {
	if body == nil {
		panic("rtapi: RT.NewTask called with a nil body")
	}
	lo, hi := rt.flavor.Priorities()
	if err := names.Check("task", spec.Name); err != nil {
		return nil, &TaskError{Task: spec.Name, Op: "new", Err: err}
	}
	if spec.Priority == 0 {
		spec.Priority = hi
	}
	name := spec.Name
	if spec.Priority < lo || spec.Priority > hi {
		return nil, taskErrf(name, "new", ErrInvalid, "priority %d outside [%d, %d]", spec.Priority, lo, hi)
	}
	for _, d := range []struct {
		what       string
		v          time.Duration
		negativeOK bool
	}{{"period", spec.Period, false}, {"watchdog timeout", spec.Watchdog, true},
		{"late threshold", spec.LateThreshold, false}, {"trace mark threshold", spec.TraceMark, true}} {
		if d.v < 0 && !d.negativeOK {
			return nil, taskErrf(name, "new", ErrInvalid, "negative %s %v", d.what, d.v)
		}
		if d.v > MaxPeriod {
			return nil, taskErrf(name, "new", ErrInvalid, "%s %v above the maximum %v", d.what, d.v, MaxPeriod)
		}
	}
	if spec.StackPrefault > MaxStackPrefault {
		return nil, taskErrf(name, "new", ErrInvalid, "stack prefault %d above the maximum %d",
			spec.StackPrefault, MaxStackPrefault)
	}
	if spec.Period > 0 && spec.Period < rt.flavor.MinPeriod() {
		return nil, taskErrf(name, "new", ErrInvalid, "period %v below the %s flavor's minimum %v",
			spec.Period, rt.info.Name, rt.flavor.MinPeriod())
	}
	if spec.Wake > WakePosixTimer {
		return nil, taskErrf(name, "new", ErrInvalid, "unknown wake mode %v", spec.Wake)
	}
	if spec.Wake != WakeAuto && spec.Wake != WakeNanosleep && spec.Period == 0 {
		return nil, taskErrf(name, "new", ErrInvalid, "wake mode %v needs a period", spec.Wake)
	}
	if spec.Overrun > Skip {
		return nil, taskErrf(name, "new", ErrInvalid, "unknown overrun policy %v", spec.Overrun)
	}
	if !spec.Interference.Valid() {
		return nil, taskErrf(name, "new", ErrInvalid, "Interference %v is not Auto, On or Off", spec.Interference)
	}
	if spec.StackPrefault < 0 {
		return nil, taskErrf(name, "new", ErrInvalid, "negative stack prefault %d", spec.StackPrefault)
	}
	if err := checkTrace(spec, rt.traits.VirtualClock); err != nil {
		return nil, taskErr(name, "new", err)
	}
	if err := spec.DeadlinePolicy.check(spec.Period); err != nil {
		return nil, taskErr(name, "new", err)
	}
	if spec.StackPrefault == 0 {
		spec.StackPrefault = DefaultStackPrefault
	}
	if spec.HistogramBound == 0 {
		spec.HistogramBound = rt.opts.HistogramBound
	}
	if spec.LateThreshold == 0 {
		spec.LateThreshold = DefaultLateThreshold(spec.Period)
	}
	if err := hist.Validate(time.Microsecond, spec.HistogramBound); err != nil {
		return nil, taskErrf(name, "new", ErrInvalid, "%v", err)
	}
	cpus, err := rt.placeCPU(spec.CPU)
	if err != nil {
		return nil, taskErr(name, "new", err)
	}

	t := &Task{
		rt:   rt,
		spec: spec,
		cpus: cpus,
		body: body,
		kick: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
	timeout := watchTimeout(spec)
	t.wd.timeout = timeout
	t.wd.faultc = make(chan struct{})
	t.wd.fault = &FaultError{Task: name, Timeout: timeout}
	t.deadlineErr = &DeadlineError{Task: name, Policy: spec.DeadlinePolicy}
	t.safeDone = make(chan struct{})
	t.stats.init(spec.HistogramBound)
	t.tc.task = t

	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return nil, taskErr(name, "new", ErrClosed)
	}
	for _, o := range rt.tasks {
		if o.spec.Name == name {
			return nil, taskErrf(name, "new", ErrInvalid, "a task of that name exists")
		}
	}
	rt.tasks = append(rt.tasks, t)
	return t, nil
}

// Name is the task's name.
func (t *Task) Name() string { return t.spec.Name }

// Spec is the task's specification, with defaults filled in.
func (t *Task) Spec() TaskSpec { return t.spec }

// State is where the task is in its life.
func (t *Task) State() TaskState { return TaskState(t.state.Load()) }

// Start runs the task (rtapi_task_start). It returns once the task's
// thread is set up (policy, priority, affinity, timer), with any set-up
// failure; a second Start is ErrState. The first cycle runs at once;
// releases follow every Period from now.
//
// On the sim flavor a lifecycle call (Start, Pause, Resume, Stop) from
// another goroutine while the controller runs tasks is ErrState.
func (t *Task) Start() error {
	return t.control("start", func() error {
		if t.rt.isClosed() {
			return taskErr(t.spec.Name, "start", ErrClosed)
		}
		if s := t.state.Load(); s != stateCreated {
			return taskErrf(t.spec.Name, "start", ErrState, "task is %s", stateNames[s])
		}
		if err := t.rt.startGuard(t); err != nil {
			return taskErr(t.spec.Name, "start", err)
		}
		if err := t.tc.trace.open(t.spec); err != nil {
			return taskErr(t.spec.Name, "start", err)
		}
		procs := t.rt.takeProcs(t) // after startGuard: a P per task needs the guard
		ready := make(chan error, 1)
		if t.rt.traits.OSThreads {
			goLocked(func() { t.run(procs, ready) })
		} else {
			go t.run(procs, ready) // a virtual thread
		}
		if err := <-ready; err != nil {
			t.giveBackProc()
			t.tc.trace.close()
			t.state.Store(stateDone)
			t.err = err
			t.startFailed = true // returned here: no failure for RT.Run
			close(t.done)
			return taskErr(t.spec.Name, "start", err)
		}
		t.state.Store(stateRunning)
		if t.spec.SafeState != nil {
			go t.safeStateOnFault()
		}
		t.rt.logger.Info("task started", zap.String("task", t.spec.Name),
			zap.String("policy", policyName(t.binding)), zap.Int("priority", t.binding.Priority),
			zap.Ints("cpus", t.binding.CPUs), zap.Stringer("wake", t.binding.Wake),
			zap.Duration("period", t.spec.Period), zap.Int("tid", t.binding.Tid), zap.Int("gomaxprocs", runtime.GOMAXPROCS(0)))
		if t.binding.Degraded != "" {
			t.rt.logger.Warn("task degraded", zap.String("task", t.spec.Name), zap.String("why", t.binding.Degraded))
		}
		return nil
	})
}

// run is the task's goroutine, on flavors with OS threads locked to a
// thread of its own (goLocked), which the runtime destroys when it exits.
// It ends the task the same way however the body ends.
// procs is why the task holds no P of its own, or "".
func (t *Task) run(procs string, ready chan<- error) {
	growStack(t.spec.StackPrefault / stackFrame)
	w, b, err := t.rt.flavor.Bind(backend.ThreadSpec{
		Name:     t.spec.Name,
		Priority: t.spec.Priority,
		CPUs:     t.cpus,
		Period:   int64(t.spec.Period),
		Wake:     t.spec.Wake.backend(),
		Control:  &t.ctl,
	})
	if err != nil {
		ready <- err
		return
	}
	t.binding = b
	t.stats.tid.Store(int64(b.Tid))
	tc := &t.tc
	tc.waker = w
	tc.period = int64(t.spec.Period)
	tc.oneshot = WakeMode(b.Wake) == WakeNanosleep
	tc.skip = t.spec.Overrun == Skip
	tc.sampleEvery = usageSampleEvery(t.spec.Period)
	if t.rt.traits.VirtualClock {
		tc.sampleEvery = 1<<63 - 1 // thread counters mean nothing in virtual time
	}
	tc.nextSample = tc.sampleEvery
	tc.interference = interferenceOn(t.spec)
	tc.counters = !t.rt.traits.VirtualClock
	tc.exactInterference = t.spec.Interference == On
	tc.lateThreshold = int64(t.spec.LateThreshold)
	tc.maxOverruns = int64(t.spec.DeadlinePolicy.MaxOverruns)
	tc.maxLate = int64(t.spec.DeadlinePolicy.MaxLate)
	tc.startInterference()
	ownP := ownPNote(procs)
	t.ownP.Store(&ownP)
	now := w.Now()
	tc.release, tc.wake = now, now
	if tc.period > 0 {
		if err := w.Arm(now+tc.period, tc.period); err != nil {
			w.Close()
			ready <- err
			return
		}
	}
	t.guardTask() // from its own thread, before anything can end it
	if t.rt.runtimeFIFO(b.Policy) {
		t.fifo = true // finish uncounts it
		if err := runtimeFIFO.add(b.Tid, t.rt.logger); err != nil {
			t.rt.logger.Warn("runtime threads left SCHED_OTHER (Options.RuntimeGuard)", zap.String("task", t.spec.Name), zap.Error(err))
		}
		if b.Policy == sys.SchedFIFO && wakeCeiling.add(b.Priority) {
			tc.ceilPrio = int32(b.Priority) // finish uncounts it
		}
	}
	ready <- nil

	returned := false
	defer func() { t.finish(err, returned) }()
	w.Begin() // a virtual clock holds the first cycle until it is due
	t.ctl.Or(ctlBody)
	err = t.callBody()
	returned = true
}

// finish ends a task whose body has returned or (!returned) called
// runtime.Goexit: it runs SafeState, releases the task's resources,
// publishes the result and closes done.
func (t *Task) finish(err error, returned bool) {
	if !returned {
		err = taskErr(t.spec.Name, "run", ErrGoexit)
	}
	if t.tc.tripped {
		var te error = &TaskError{Task: t.spec.Name, Op: "run", Err: t.deadlineErr}
		if err != nil {
			te = errors.Join(te, err)
		}
		err = te
	}
	t.safeState()
	t.unguardTask()   // while the thread, and so its tid, is still this task's
	t.ctl.Or(ctlStop) // a TaskContext kept past the body: WaitPeriod returns false
	if t.tc.counters {
		t.tc.sampleUsage()
	}
	if cerr := t.tc.waker.Close(); err == nil && cerr != nil {
		err = cerr
	}
	t.tc.trace.close()
	// Off SCHED_FIFO first: giving back a spare P stops the world, which
	// waits for threads a real-time caller could keep off the CPU.
	if t.binding.Policy == sys.SchedFIFO || t.binding.Policy == sys.SchedRR {
		_ = sys.SetScheduler(0, sys.SchedOther, 0)
	}
	t.giveBackProc()
	if t.fifo {
		runtimeFIFO.remove(t.binding.Tid)
	}
	if t.tc.ceilPrio != 0 {
		wakeCeiling.remove(int(t.tc.ceilPrio))
		t.tc.ceilPrio = 0
	}
	t.mu.Lock()
	t.err = err
	t.state.Store(stateDone)
	t.mu.Unlock()
	close(t.done)
	t.rt.taskEnded()
	if err != nil {
		t.rt.logger.Error("task ended with an error", zap.String("task", t.spec.Name), zap.Error(err))
	}
}

// callBody runs the body, turning a panic into a PanicError.
func (t *Task) callBody() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Task: t.spec.Name, Value: v, Stack: debug.Stack()}
		}
	}()
	return t.body(&t.tc)
}

// usageSampleEvery spaces the thread's getrusage samples about 100 ms apart.
func usageSampleEvery(period time.Duration) int64 {
	if period <= 0 {
		return 1000
	}
	return max(1, int64(100*time.Millisecond/period))
}

const stackFrame = 1024

// growStack recurses n frames of about 1 KiB to grow the stack up front.
//
//go:noinline
func growStack(n int) byte {
	var frame [stackFrame - 64]byte
	if n <= 1 {
		return frame[0]
	}
	frame[n%len(frame)] = growStack(n - 1)
	return frame[(n+1)%len(frame)]
}
