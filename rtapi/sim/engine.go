package sim

import (
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/backend"
	"github.com/gortapi/gortapi/rtapi"
)

// defaultHangTimeout is the real time a body may take to reach WaitPeriod.
const defaultHangTimeout = 5 * time.Second

// defaultTraceLimit is the trace's length when SimOptions.TraceLimit is 0.
const defaultTraceLimit = 4096

// simMinPeriod and the priorities are the Linux backends', for portability.
const (
	simMinPeriod  = 10 * time.Microsecond
	simPrioLowest = 1
	simPrioHigh   = 98
	// simQuantum is a non-periodic cycle's least cost, so time moves.
	simQuantum = int64(time.Microsecond)
)

// init registers the sim flavor.
func init() {
	backend.Register(backend.Descriptor{Name: backend.SimName, Open: openEngine})
}

var (
	_ backend.Flavor = (*engine)(nil)
	_ backend.Waker  = (*simThread)(nil)
)

// openEngine opens the sim flavor with cfg.Sim, an rtapi.SimOptions or nil.
func openEngine(cfg backend.Config) (backend.Flavor, string, error) {
	var o rtapi.SimOptions
	switch v := cfg.Sim.(type) {
	case nil:
	case rtapi.SimOptions:
		o = v
	default:
		return nil, "", fmt.Errorf("sim options of type %T, want rtapi.SimOptions: %w", cfg.Sim, rtapi.ErrInvalid)
	}
	if o.HangTimeout < 0 {
		return nil, "", fmt.Errorf("sim hang timeout %v is negative: %w", o.HangTimeout, rtapi.ErrInvalid)
	}
	return newEngine(o), "sim flavor: tasks run one at a time on a virtual clock driven by the " +
		"simulation controller; deterministic, needs no privileges and no real-time kernel", nil
}

// errTaskLeft: Run's goal task was paused or ended first.
var errTaskLeft = fmt.Errorf("task left the schedule: %w", rtapi.ErrState)

// errBusy refuses a controller call made while another runs.
var errBusy = fmt.Errorf("sim: controller called while the simulation runs (from a task body or a RunUntil predicate?): %w", rtapi.ErrState)

// errClosed is returned once the simulation is closed.
var errClosed = fmt.Errorf("sim: simulation closed: %w", os.ErrClosed)

type simFault struct {
	cycle int64
	value int64 // stall: periods; overrun: extra ns
}

// simTaskState is the per-name injection plan, kept across binds.
type simTaskState struct {
	cfg      TaskConfig
	stalls   []simFault
	overruns []simFault
}

type clockStep struct{ at, by int64 }

// engine is the simulated flavor ("sim"): a virtual clock, and a scheduler
// that runs the tasks' bodies one at a time.
//
// The model. A task is released at each deadline plus its injected
// lateness (Jitter, stalls), or at once when the deadline passed during
// its previous cycle; the cycle lasts its Cost (or the body's real time,
// with RealExec). During the body TaskContext.Now reads the cycle's
// start; WaitPeriod sees the end. Each task has a CPU of its own unless
// SharedCPU puts all on one, scheduled like SCHED_FIFO. Bodies run by
// start instant, then priority (highest first), then creation order
// (setOrder; without it, start order). A task that is not periodic costs
// at least simQuantum a cycle, so it cannot stop the clock. timerfd and
// posix-timer wake modes are periodic timers that count missed
// expirations.
//
// The turn. At most one goroutine runs the simulation: the controller
// call (Run) or the virtual thread it gave the turn to. The turn's holder
// owns the run queue and the clock (engine_sched.go) and, at a scheduling
// point, hands the turn to the next thread or back to the controller; a
// thread still first keeps it without a goroutine switch.
//
// Lifecycle calls (Start, Pause, Resume, Stop) come only from the
// goroutine that owns the simulation (Enter): between controller calls
// any goroutine, one call at a time; during one, the goroutine with the
// turn. Others get errForeign (rtapi.ErrState). A Stop between controller
// calls runs the task to its exit before it returns (HACKING.md, "The
// simulator's turn model").
//
// Controller methods (Run, SetTask, Inject*, Trace) are for one goroutine
// at a time and refuse calls from task bodies (errBusy); a body may call
// Now.
type engine struct {
	// Settings, fixed at newEngine.
	hang   time.Duration
	seed   uint64
	limit  int
	shared bool // SharedCPU

	// mu guards the controller's state below; cond (on mu) signals
	// paused threads rejoining or exiting, the controller coming free,
	// and the simulation dying.
	mu      sync.Mutex
	cond    sync.Cond
	ctlHeld bool         // a controller or lifecycle call holds the simulation
	running bool         // a controller call runs tasks: other calls are refused
	ctlGoid uint64       // the goroutine holding it, when it may make lifecycle calls
	threads []*simThread // every thread ever bound, by seq
	plans   map[string]*simTaskState
	order   func() []string
	closed  bool
	broken  error

	dead   atomic.Bool // closed or hung: no more scheduling
	driven atomic.Bool // a controller was made for the simulation (Drive)
	back   chan struct{}

	// Owned by whoever has the turn (engine_sched.go), or by the
	// lifecycle call that holds the simulation between controller calls.
	now      atomic.Int64 // also read by Now from any goroutine
	target   int64
	exclude  bool // a Stop's run: only threads being stopped run
	runq     []*simThread
	joins    []*simThread // started or resumed since the last pick
	kicks    []*simThread // stopped since the last pick
	pending  bool         // joins or kicks to take in at the next pick
	steps    []clockStep
	stopNow  bool
	checking bool
	pred     func() bool
	goal     *simThread
	goalN    int64
	lost     string // why the goal thread left the schedule
	count    uint64
	digest   uint64
	ring     []Event
	progress atomic.Uint64             // hand-offs, for the hang check
	holder   atomic.Pointer[simThread] // the thread with the turn, for the hang check
}

// newEngine returns a simulation at virtual time 0.
func newEngine(o rtapi.SimOptions) *engine {
	s := &engine{back: make(chan struct{}, 1), plans: map[string]*simTaskState{},
		seed: o.Seed, shared: o.SharedCPU, hang: o.HangTimeout, limit: o.TraceLimit}
	s.cond.L = &s.mu
	if s.hang <= 0 {
		s.hang = defaultHangTimeout
	}
	if s.limit == 0 {
		s.limit = defaultTraceLimit
	}
	if s.limit > 0 {
		// A power of two, so that recording masks instead of dividing.
		s.ring = make([]Event, 1<<bits.Len(uint(s.limit-1)))
	}
	return s
}

// setOrder breaks ties at one instant and priority by the order that
// order returns the live tasks' names in (creation order) instead of
// start order. order is called under mu now and whenever a task starts.
func (s *engine) setOrder(order func() []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order = order
	s.rerank()
}

// Traits: a virtual clock, and virtual threads that need no OS thread of
// their own, since a switch between locked goroutines costs a futex round
// trip.
func (s *engine) Traits() backend.Traits { return backend.Traits{VirtualClock: true} }

// Name is "sim".
func (s *engine) Name() string { return backend.SimName }

// RealTime is false: nothing about the host's scheduling is real-time.
func (s *engine) RealTime() bool { return false }

// Now is the virtual time in nanoseconds: the release instant of the
// cycle being run, or where the last controller call stopped.
// RT-safe.
func (s *engine) Now() int64 { return s.now.Load() }

// Drive records that a controller drives the clock; without one no task runs.
func (s *engine) Drive() { s.driven.Store(true) }

// Driven reports whether Drive was called.
func (s *engine) Driven() bool { return s.driven.Load() }

// Priorities is the Linux backends' range, 1 to 98.
func (s *engine) Priorities() (lowest, highest int) { return simPrioLowest, simPrioHigh }

// MinPeriod is the Linux backends' 10 µs.
func (s *engine) MinPeriod() time.Duration { return simMinPeriod }

// Bind creates a starting task's virtual thread, due at the current time.
func (s *engine) Bind(spec backend.ThreadSpec) (backend.Waker, backend.Binding, error) {
	wake, err := backend.ResolveWake(spec.Wake, backend.WakeNanosleep)
	if err != nil {
		return nil, backend.Binding{}, err
	}
	if spec.Period == 0 {
		wake = backend.WakeNanosleep
	}
	th := &simThread{
		s:      s,
		name:   spec.Name,
		prio:   spec.Priority,
		period: spec.Period,
		timer:  wake != backend.WakeNanosleep,
		turn:   make(chan struct{}, 1),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unusable(); err != nil {
		return nil, backend.Binding{}, err
	}
	th.seq = int32(len(s.threads))
	th.at = s.now.Load()
	th.local = th.at
	th.applyPlan(s.plans[spec.Name], s.seed)
	th.goid = goid()
	s.threads = append(s.threads, th)
	// The caller of Start owns the queue and waits for Bind to return.
	s.joins = append(s.joins, th)
	s.pending = true
	return th, backend.Binding{Priority: spec.Priority, Wake: wake, Virtual: true}, nil
}

// Close ends the simulation, waking every thread it holds. Idempotent.
func (s *engine) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.die()
	for _, th := range s.threads {
		select {
		case th.turn <- struct{}{}:
		default:
		}
	}
	return nil
}

// die stops all scheduling: closed, or a task hung. Under mu.
func (s *engine) die() {
	s.dead.Store(true)
	s.cond.Broadcast()
}

// realNow is a monotonic real clock for RealExec.
func realNow() int64 { return int64(time.Since(realBase)) }

var realBase = time.Now()
