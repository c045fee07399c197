package rtapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/internal/spinguard"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/hist"
)

// OverrunPolicy says what a periodic task does about releases that passed
// while its body ran.
type OverrunPolicy uint8

const (
	// CatchUp runs the missed cycles back to back without sleeping, so the
	// task keeps its cycle count (LinuxCNC's behaviour).
	CatchUp OverrunPolicy = iota
	// Skip drops the missed releases and waits for the next one on the
	// grid (cyclictest's behaviour).
	Skip
)

func (p OverrunPolicy) String() string {
	switch p {
	case CatchUp:
		return "catchup"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("overrun(%d)", uint8(p))
}

// ParseOverrunPolicy parses "catchup" or "skip".
func ParseOverrunPolicy(s string) (OverrunPolicy, error) {
	switch s {
	case "catchup", "catch-up":
		return CatchUp, nil
	case "skip":
		return Skip, nil
	}
	return 0, fmt.Errorf("unknown overrun policy %q (valid: catchup, skip): %w", s, ErrInvalid)
}

// CPUChoice says where a task's thread runs. The zero value, CPUAuto, lets
// gortapi choose; OnCPU(n) pins it; Unpinned leaves it to the scheduler.
type CPUChoice int

const (
	// CPUAuto: Options.CPUs (or RTAPI_CPU), else the highest isolated
	// CPU of the process's cpuset, else unpinned — LinuxCNC's rule.
	CPUAuto CPUChoice = 0
	// Unpinned: no affinity is set.
	Unpinned CPUChoice = -1
)

// OnCPU pins a task to CPU n, which must be online and in the process's
// cpuset. A negative n is ErrInvalid at NewTask.
func OnCPU(n int) CPUChoice {
	if n < 0 {
		return CPUChoice(max(n, math.MinInt+1) - 1) // below Unpinned
	}
	return CPUChoice(min(n, math.MaxInt-1) + 1)
}

// cpu returns the n of OnCPU(n).
func (c CPUChoice) cpu() int {
	if c < Unpinned {
		return int(c) + 1
	}
	return int(c) - 1
}

// TaskSpec describes a task. The zero value of each field is a sensible
// default, except Name, which is required.
type TaskSpec struct {
	// Name identifies the task in errors, logs and statistics; unique
	// among the instance's tasks.
	Name string
	// Priority in [PrioLowest, PrioHighest]; 0 means PrioHighest.
	Priority int
	// Period of a periodic task; 0 for a task that is not periodic (its
	// WaitPeriod does not sleep). From the flavor's minimum (10 µs on Linux)
	// to MaxPeriod.
	Period time.Duration
	// CPU places the task's thread; see CPUChoice.
	CPU CPUChoice
	// Wake selects the wake-up mechanism; WakeAuto lets the flavor choose.
	Wake WakeMode
	// Overrun selects CatchUp (default) or Skip.
	Overrun OverrunPolicy
	// StackPrefault is the goroutine stack grown before the first cycle,
	// so that the body never copies its stack mid-cycle. Zero:
	// DefaultStackPrefault; at most MaxStackPrefault.
	StackPrefault int
	// HistogramBound overrides Options.HistogramBound for this task.
	HistogramBound time.Duration
	// Watchdog is how long the task may go without completing a cycle,
	// busy on its CPU at least half that time, before the watchdog of a
	// real-time flavor demotes it to SCHED_OTHER and faults it (a
	// *FaultError). Zero: DefaultWatchdogPeriods periods plus
	// DefaultWatchdogSlack if periodic, else none. Negative: none. At most
	// MaxPeriod.
	Watchdog time.Duration
	// Interference turns Stats.Interference on or off. Auto reads the
	// thread's counters (a getrusage system call) after a late wake-up and
	// about every 100 ms; On reads them every cycle, for exact counts.
	Interference Toggle
	// LateThreshold is the wake-up latency above which a wake-up counts
	// as late in Stats.Interference. Zero: DefaultLateThreshold(Period);
	// at most MaxPeriod.
	LateThreshold time.Duration
	// GCShield keeps the task on time while the rest of the process
	// allocates: its nanosleep wait keeps its P, one fewer for the rest
	// (docs/GC.md, "Several tasks"). Auto takes Options.GCShield; both
	// Auto: on real-time flavors, periodic nanosleep tasks of at least
	// GCShieldMinPeriod, shortest periods first, as far as the Ps allow.
	// On: always, except in a timer wake mode; too many starve the program.
	// Stats.GCShield says what the task got and why.
	GCShield Toggle
	// DeadlinePolicy faults a periodic task after a run of overruns or
	// one wake-up too late; the zero value never does.
	DeadlinePolicy DeadlinePolicy
	// SafeState, if not nil, brings what the task drives to a safe state
	// ("drop amp-enable, zero the DAC outputs"). It runs once, when the
	// task ends for any reason, on the task's thread before Wait returns.
	// When the watchdog faults the task it runs at once on a goroutine of
	// its own; the runaway body is not stopped (Go cannot kill it) and may
	// write its outputs again. It must return; its panic is logged.
	SafeState func()
	// TraceMark writes a line to the kernel's trace_marker whenever a
	// wake-up is later than TraceMark (cyclictest's --tracemark), one write
	// system call, counted in Stats.TraceMarks. Zero: none; at most
	// MaxPeriod. Start fails with ErrNotSupported without tracefs (or on
	// sim), ErrPermission where it is not writable (docs/GC.md, "A kernel
	// trace around a late wake-up").
	TraceMark time.Duration
	// TraceStop also stops the kernel's tracing at the first wake-up
	// later than TraceMark (cyclictest's -b); the task runs on.
	// Stats.TraceStopCycle says when. Needs TraceMark.
	TraceStop bool
	// TraceDir is the tracefs directory (or trace instance) the trace hook
	// writes in. Empty: the tracefs mount of /proc/self/mounts. Start
	// fails with ErrInvalid unless it is on a tracefs (statfs) and its
	// trace_marker and tracing_on are not symlinks.
	TraceDir string
}

// DefaultStackPrefault is the stack grown before a task's first cycle.
const DefaultStackPrefault = 64 << 10

// Bounds of a TaskSpec; larger values are ErrInvalid. They keep deadline
// arithmetic far from overflowing int64 nanoseconds.
const (
	// MaxPeriod bounds Period, Watchdog and LateThreshold.
	MaxPeriod = 24 * time.Hour
	// MaxStackPrefault bounds StackPrefault.
	MaxStackPrefault = 64 << 20
)

// task states
const (
	stateCreated int32 = iota
	stateRunning
	statePaused
	stateStopping
	stateDone
)

var stateNames = [...]string{"created", "running", "paused", "stopping", "done"}

// control bits, read by the task once per cycle (HACKING.md, "The
// control word")
const (
	ctlStop  = backend.ControlStop
	ctlPause = backend.ControlPause
	ctlFault = ctlPause << 1 // set by the watchdog
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
	wd      taskWatch
	shield  taskShield       // gc.go
	guarded *spinguard.Guard // spin.go
	spare   bool             // counted in spareProcs (procs.go); guarded by spareProcs.mu
	// fifo: counted in runtimeFIFO, until finish; fifoForced: RuntimeFIFO On.
	fifo, fifoForced bool

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
	for _, tg := range []struct {
		field string
		v     Toggle
	}{{"GCShield", spec.GCShield}, {"Interference", spec.Interference}} {
		if !tg.v.Valid() {
			return nil, taskErrf(name, "new", ErrInvalid, "%s %v is not Auto, On or Off", tg.field, tg.v)
		}
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
	t.wd.Timeout = timeout
	t.wd.Subject = (*watchSubject)(t)
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

// State is "created", "running", "paused", "stopping" or "done".
func (t *Task) State() string { return stateNames[t.state.Load()] }

// Start runs the task (rtapi_task_start). It returns once the task's
// thread is set up (policy, priority, affinity, timer), with any set-up
// failure; a second Start is ErrState. The first cycle runs at once;
// releases follow every Period from now.
//
// On the sim flavor a lifecycle call (Start, Pause, Resume, Stop) from
// another goroutine while the controller runs tasks is ErrState.
func (t *Task) Start() error {
	leave, err := t.rt.flavor.Enter()
	if err != nil {
		return taskErr(t.spec.Name, "start", err)
	}
	defer leave()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rt.isClosed() {
		return taskErr(t.spec.Name, "start", ErrClosed)
	}
	if s := t.state.Load(); s != stateCreated {
		return taskErrf(t.spec.Name, "start", ErrState, "task is %s", stateNames[s])
	}
	if err := t.rt.startSpinGuard(); err != nil {
		return taskErr(t.spec.Name, "start", err)
	}
	if err := t.tc.trace.open(t.spec); err != nil {
		return taskErr(t.spec.Name, "start", err)
	}
	if t.rt.wantSpareProcs() {
		t.rt.takeProcs(t)
	}
	ready := make(chan error, 1)
	if t.rt.traits.OSThreads {
		goLocked(func() { t.run(ready) })
	} else {
		go t.run(ready) // a virtual thread
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
	t.watch()
	t.rt.logger.Info("task started", zap.String("task", t.spec.Name),
		zap.String("policy", policyName(t.binding)), zap.Int("priority", t.binding.Priority),
		zap.Ints("cpus", t.binding.CPUs), zap.Stringer("wake", t.binding.Wake),
		zap.Duration("period", t.spec.Period), zap.Int("tid", t.binding.Tid), zap.Int("gomaxprocs", runtime.GOMAXPROCS(0)))
	if t.binding.Degraded != "" {
		t.rt.logger.Warn("task degraded", zap.String("task", t.spec.Name), zap.String("why", t.binding.Degraded))
	}
	return nil
}

// run is the task's goroutine, on flavors with OS threads locked to a
// thread of its own (goLocked), which the runtime destroys when it exits.
// It ends the task the same way however the body ends.
func (t *Task) run(ready chan<- error) {
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
	tc.raw = t.rt.shields.join(t, WakeMode(b.Wake), t.rt.logger)
	w.SetRawSleep(tc.raw)
	now := w.Now()
	tc.release, tc.wake = now, now
	if tc.period > 0 {
		if err := w.Arm(now+tc.period, tc.period); err != nil {
			t.rt.shields.leave(t, t.rt.logger)
			w.Close()
			ready <- err
			return
		}
	}
	t.guardTask() // from its own thread, before anything can end it
	if count, forced := t.rt.runtimeFIFO(b.Policy); count {
		t.fifo, t.fifoForced = true, forced // finish uncounts it
		if err := runtimeFIFO.add(b.Tid, forced, t.rt.logger); err != nil {
			t.rt.logger.Warn("runtime threads left SCHED_OTHER (Options.RuntimeFIFO)", zap.String("task", t.spec.Name), zap.Error(err))
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
	t.rt.shields.leave(t, t.rt.logger)
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
		runtimeFIFO.remove(t.binding.Tid, t.fifoForced)
	}
	t.mu.Lock()
	t.err = err
	t.state.Store(stateDone)
	t.mu.Unlock()
	t.unwatch()
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

// Pause suspends the task at its next cycle boundary (rtapi_task_pause):
// a running cycle finishes, a sleeping task is parked at once, and the
// body does not run again until Resume. Periods that pass while paused are
// not overruns. A task not running is ErrState.
func (t *Task) Pause() error {
	leave, err := t.rt.flavor.Enter()
	if err != nil {
		return taskErr(t.spec.Name, "pause", err)
	}
	defer leave()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.state.Load(); s != stateRunning {
		return taskErrf(t.spec.Name, "pause", ErrState, "task is %s", stateNames[s])
	}
	t.ctl.Or(ctlPause)
	t.state.Store(statePaused)
	t.interrupt()
	return nil
}

// Resume lets a paused task run again (rtapi_task_resume) on its period
// grid, from the first grid point after now. A task not paused is ErrState.
func (t *Task) Resume() error {
	leave, err := t.rt.flavor.Enter()
	if err != nil {
		return taskErr(t.spec.Name, "resume", err)
	}
	defer leave()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.state.Load(); s != statePaused {
		return taskErrf(t.spec.Name, "resume", ErrState, "task is %s, not paused", stateNames[s])
	}
	t.ctl.And(^ctlPause)
	t.state.Store(stateRunning)
	t.poke()
	return nil
}

// Stop asks the task to end: its next WaitPeriod returns false, at once if
// it is paused or sleeping. A task never started is marked done; a stopped
// one is left alone. Stop does not wait; Wait does. It fails only on the
// sim flavor (see Start), where between controller calls it returns once
// the task has ended.
func (t *Task) Stop() error {
	leave, err := t.rt.flavor.Enter()
	if err != nil {
		return taskErr(t.spec.Name, "stop", err)
	}
	defer leave()
	t.mu.Lock()
	defer t.mu.Unlock()
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
