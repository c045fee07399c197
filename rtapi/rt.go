package rtapi

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/kerneldetect"
)

// RT is one RTAPI instance (rtapi_init / rtapi_exit): a flavor opened on
// this kernel and its tasks. Its methods are safe for concurrent use;
// call them from set-up code, not a task body, unless their doc says so.
type RT struct {
	opts   Options
	kernel *kerneldetect.Report
	cpus   cpuFacts // what task placement is checked against
	flavor backend.Flavor
	info   FlavorInfo
	logger *zap.Logger

	mu         sync.Mutex
	tasks      []*Task
	closed     bool
	closing    chan struct{}  // closed when the first Close has finished
	closeBegun chan struct{}  // closed when the first Close begins: ends Run
	traits     backend.Traits // what the flavor needs: its clock, its threads

	msgMu sync.Mutex
	msg   *msgState // the message drainer, started by the first MsgLogger

	guard      guardState    // the guard process (guard.go)
	spareNoted atomic.Bool   // why GOMAXPROCS was left alone was logged (procs.go)
	ended      chan struct{} // a task ended or was faulted: wakes Run (context.go)
}

// FlavorInfo says which flavor runs the tasks and why it was chosen.
type FlavorInfo struct {
	Name     string // registry name: "posix", "rt-preempt", "sim"
	RealTime bool   // task threads get a real-time policy
	Why      string // the detection evidence behind the choice, and what would do better
}

// String gives "rt-preempt (real-time): why", or "(not real-time)".
func (f FlavorInfo) String() string {
	rt := "real-time"
	if !f.RealTime {
		rt = "not real-time"
	}
	return fmt.Sprintf("%s (%s): %s", f.Name, rt, f.Why)
}

// Open detects the kernel, selects and opens the flavor, and hardens the
// process (rtapi_init). Bad settings give ErrInvalid; a flavor asked for
// by name that cannot run here gives ErrPermission or ErrNotSupported,
// never a silent fallback.
func Open(opts Options) (*RT, error) {
	opts, err := opts.resolve(osGetenv)
	if err != nil {
		return nil, fmt.Errorf("rtapi.Open: %w", err)
	}
	kernel, err := backend.DetectKernel(opts.Kernel)
	if err != nil {
		return nil, fmt.Errorf("rtapi.Open: %w", err)
	}
	cpus := readCPUFacts(kernel)
	if err := cpus.checkAll(opts.CPUs); err != nil {
		return nil, fmt.Errorf("rtapi.Open: %w", err)
	}
	rt := &RT{opts: opts, kernel: kernel, cpus: cpus, logger: opts.Logger, ended: make(chan struct{}, 1),
		closeBegun: make(chan struct{})}
	var sim any // the sim flavor's options: package rtapi/sim takes them
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	cfg := opts.backendConfig(kernel)
	cfg.Sim = sim
	choice, err := backend.Select(opts.Flavor, cfg)
	if err != nil {
		return nil, fmt.Errorf("rtapi.Open: %w", err)
	}
	rt.flavor = choice.Flavor
	rt.traits = choice.Flavor.Traits()
	rt.info = FlavorInfo{
		Name:     choice.Flavor.Name(),
		RealTime: choice.Flavor.RealTime(),
		Why:      choice.Why,
	}
	rt.logger.Info("rtapi open", zap.String("flavor", rt.info.Name), zap.Bool("realtime", rt.info.RealTime),
		zap.String("kernel", kernel.Kind.String()), zap.String("why", rt.info.Why))
	return rt, nil
}

// Close stops every task, waits for each up to Options.StopTimeout, and
// releases the flavor (rtapi_exit). A sleeping or paused task stops at
// once. A task that would not stop is reported (ErrTimeout) and
// abandoned; the flavor is then released when the last such task ends.
// Unless a task was abandoned or another RT runs tasks, no thread rtapi
// made real-time is left so. Each task's Stats.OwnP keeps what it had
// while the set ran. Close is idempotent and safe to call concurrently:
// every call returns once the first has finished, later ones with nil.
// Called from a task's body it closes nothing and returns ErrState.
func (rt *RT) Close() error {
	for _, t := range rt.Tasks() {
		if t.onOwnThread() {
			return fmt.Errorf("rtapi: Close: %w", errOwnBody(t, "close"))
		}
	}
	rt.mu.Lock()
	if rt.closed {
		closing := rt.closing
		rt.mu.Unlock()
		<-closing
		return nil
	}
	rt.closed = true
	rt.closing = make(chan struct{})
	close(rt.closeBegun)
	defer close(rt.closing)
	tasks := slices.Clone(rt.tasks)
	rt.mu.Unlock()

	rt.warnIdleSim(tasks)
	var errs []error
	for _, t := range tasks {
		t.Stop()
	}
	deadline := time.Now().Add(rt.opts.StopTimeout)
	var running []*Task
	for _, t := range tasks {
		if !t.waitDone(time.Until(deadline)) {
			running = append(running, t)
			errs = append(errs, taskErrf(t.spec.Name, "close", ErrTimeout,
				"did not stop within %v (its body never returns to WaitPeriod)", rt.opts.StopTimeout))
		}
	}
	if err := rt.closeGuard(); err != nil {
		errs = append(errs, err)
	}
	// Write out what the tasks' message rings still hold.
	if err := rt.closeMessages(); err != nil {
		errs = append(errs, err)
	}
	if len(running) == 0 {
		if err := rt.flavor.Close(); err != nil {
			errs = append(errs, err)
		}
	} else {
		go rt.releaseAfter(running)
	}
	rt.logger.Info("rtapi closed", zap.Int("tasks", len(tasks)), zap.Int("abandoned", len(running)))
	return errors.Join(errs...)
}

// releaseAfter releases the flavor once the abandoned tasks have ended.
func (rt *RT) releaseAfter(running []*Task) {
	for _, t := range running {
		<-t.done
	}
	if err := rt.flavor.Close(); err != nil {
		rt.logger.Error("rtapi: releasing the flavor after the last task ended", zap.Error(err))
	}
}

// Flavor says which flavor runs the tasks and why.
func (rt *RT) Flavor() FlavorInfo { return rt.info }

func init() {
	backend.FlavorOf = func(x any) (backend.Flavor, error) {
		rt := x.(*RT)
		if rt.isClosed() {
			return nil, fmt.Errorf("rtapi: %w", ErrClosed)
		}
		return rt.flavor, nil
	}
}

// Kernel is the detection report the flavor was chosen from. Changing it
// does not change the CPU lists rt checks task placement against.
func (rt *RT) Kernel() *kerneldetect.Report { return rt.kernel }

// Logger is the zap logger from Options (when none was set, one that
// writes warnings and errors to stderr).
func (rt *RT) Logger() *zap.Logger { return rt.logger }

// Instance is the shared-memory instance number from Options.
func (rt *RT) Instance() int { return rt.opts.Instance }

// ShmGroup is Options.ShmGroup as resolved (field, flag or
// $RTAPI_SHM_GROUP): the group this host's segments are shared with, ""
// for none. hal.New and halctl.Serve take it as their default.
func (rt *RT) ShmGroup() string { return rt.opts.ShmGroup }

// StopTimeout is how long Close and Task.Delete wait for each task to
// stop: Options.StopTimeout, resolved.
func (rt *RT) StopTimeout() time.Duration { return rt.opts.StopTimeout }

// Now reads this instance's clock in nanoseconds: CLOCK_MONOTONIC, or
// virtual time on the sim flavor (rtapi_get_time), unlike MonotonicNow.
// RT-safe.
func (rt *RT) Now() int64 { return rt.flavor.Now() }

// PrioHighest is the highest task priority (rtapi_prio_highest): 98 on
// the Linux flavors, one below the runtime guard, or lower where RLIMIT_RTPRIO
// caps SCHED_FIFO (Flavor().Why says so).
func (rt *RT) PrioHighest() int { _, hi := rt.flavor.Priorities(); return hi }

// PrioLowest is the lowest task priority (rtapi_prio_lowest).
func (rt *RT) PrioLowest() int { lo, _ := rt.flavor.Priorities(); return lo }

// PrioNextHigher returns the next priority above p, or the highest when p
// is already there (rtapi_prio_next_higher).
func (rt *RT) PrioNextHigher(p int) int {
	lo, hi := rt.flavor.Priorities()
	return min(max(p+1, lo), hi)
}

// PrioNextLower returns the next priority below p, or the lowest when p
// is already there (rtapi_prio_next_lower).
func (rt *RT) PrioNextLower(p int) int {
	lo, hi := rt.flavor.Priorities()
	return max(min(p-1, hi), lo)
}

// Tasks lists the tasks created on rt and not deleted, in creation order.
func (rt *RT) Tasks() []*Task {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.tasks)
}

// Task returns the task with the given name.
func (rt *RT) Task(name string) (*Task, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, t := range rt.tasks {
		if t.spec.Name == name {
			return t, true
		}
	}
	return nil, false
}

// warnIdleSim warns when tasks were started on a virtual clock that never
// moved (a real program run with RTAPI_FLAVOR=sim): they ran no cycle.
func (rt *RT) warnIdleSim(tasks []*Task) {
	if !rt.traits.VirtualClock || rt.flavor.Now() != 0 {
		return
	}
	started := 0
	for _, t := range tasks {
		if t.state.Load() != stateCreated {
			started++
		}
	}
	if started > 0 {
		rt.logger.Warn("sim flavor: the virtual clock never advanced, so no task ran a cycle; "+
			"drive it with package rtapi/sim (sim.New(rt), then Advance), or choose a real flavor (RTAPI_FLAVOR, -rtapi.flavor)",
			zap.Int("tasks", started))
	}
}
