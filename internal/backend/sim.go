package backend

import (
	"fmt"
	"math/bits"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/errs"
)

// SimName is the registry name of the simulated flavor.
const SimName = "sim"

// SimDefaultHangTimeout is how long, in real time, a simulation waits for
// a task body to come back to WaitPeriod before it reports the task hung.
const SimDefaultHangTimeout = 5 * time.Second

// SimDefaultTraceLimit is how many trace records a simulation keeps when
// SimConfig.TraceLimit is zero.
const SimDefaultTraceLimit = 4096

// simMinPeriod and the priority range match the Linux backends, so that a
// program that runs on sim runs unchanged on rt-preempt.
const (
	simMinPeriod  = 10 * time.Microsecond
	simPrioLowest = 1
	simPrioHigh   = 98
	// simQuantum is the least a cycle of a task that is not periodic
	// costs, so that such a task cannot stop virtual time.
	simQuantum = int64(time.Microsecond)
)

func init() {
	Register(Descriptor{Name: SimName, Open: openSim})
}

var (
	_ Flavor        = (*Sim)(nil)
	_ VirtualThread = (*simThread)(nil)
)

func openSim(cfg Config) (Flavor, string, error) {
	return NewSim(cfg.Sim), "sim flavor: tasks run one at a time on a virtual clock driven by the " +
		"simulation controller; deterministic, needs no privileges and no real-time kernel", nil
}

// SimConfig configures a simulation. The zero value works.
type SimConfig struct {
	// Seed seeds every task's fault-injection random stream (each task
	// draws from its own stream, keyed by the seed and its name).
	Seed uint64
	// HangTimeout is the real time a controller call waits for a task
	// body to reach its next WaitPeriod before failing with a HangError.
	// Zero: SimDefaultHangTimeout.
	HangTimeout time.Duration
	// TraceLimit is how many of the most recent trace records are kept.
	// Zero: SimDefaultTraceLimit; negative: none (the digest and count
	// are still kept).
	TraceLimit int
	// SharedCPU runs every task on one simulated CPU with preemptive
	// fixed-priority scheduling: a release waits while a task of higher
	// or equal priority is executing, and a higher-priority release
	// preempts (lengthens) the cycles of lower-priority tasks by its
	// cost. Off: each task behaves as if it had a CPU of its own.
	SharedCPU bool
	// Order returns the names of the live tasks in the order they were
	// created, so that ties at one instant and one priority go by
	// creation rather than by start order. It is called (outside any
	// task lock) whenever a task starts. nil: ties go by start order.
	Order func() []string
}

// SimEventKind is what a trace record says happened.
type SimEventKind uint8

// Trace record kinds. Value holds what the kind's comment says.
const (
	SimStart     SimEventKind = iota + 1 // first cycle released; Value 0
	SimWake                              // woken for a release; Value: latency ns
	SimEnd                               // cycle ended; Value: execution time ns
	SimPause                             // task suspended (Pause); Value 0
	SimResume                            // task back in the schedule (Resume); Value 0
	SimExit                              // task body returned; Value 0
	SimStall                             // injected stall; Value: delay ns
	SimOverrun                           // injected overrun; Value: extra execution ns
	SimClockStep                         // virtual clock jumped; Value: the jump ns
)

var simEventNames = [...]string{"", "start", "wake", "end", "pause", "resume", "exit", "stall", "overrun", "clock-step"}

func (k SimEventKind) String() string {
	if int(k) < len(simEventNames) && k != 0 {
		return simEventNames[k]
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// SimRecord is one trace record. Thread indexes SimTrace.Names (-1 for
// a record about the whole simulation, such as a clock step).
type SimRecord struct {
	Thread int32
	Kind   SimEventKind
	Cycle  int64
	Time   int64
	Value  int64
}

// HangError reports a task body that did not come back to WaitPeriod
// within the hang timeout (real time). It matches os.ErrDeadlineExceeded
// (rtapi.ErrTimeout) with errors.Is.
type HangError struct {
	Task    string
	Timeout time.Duration
	Now     int64 // virtual time when the task was released
}

func (e *HangError) Error() string {
	return fmt.Sprintf("sim: task %q did not reach WaitPeriod within %v of real time "+
		"(released at virtual time %v): its body never yields", e.Task, e.Timeout, time.Duration(e.Now))
}

// Unwrap makes a HangError match os.ErrDeadlineExceeded.
func (e *HangError) Unwrap() error { return os.ErrDeadlineExceeded }

// ErrSimTaskLeft is what Run returns when the task it was to run cycles
// of was paused or ended first.
var ErrSimTaskLeft = fmt.Errorf("task left the schedule: %w", errs.State)

// ErrSimBusy is what a controller call made while another runs returns
// (from a task body, a predicate, or a second goroutine).
var ErrSimBusy = fmt.Errorf("sim: controller called while the simulation runs (from a task body or a RunUntil predicate?): %w", errs.State)

var errSimBusy = ErrSimBusy

// errSimClosed is returned once the simulation is closed.
var errSimClosed = fmt.Errorf("sim: simulation closed: %w", os.ErrClosed)

// SimTaskConfig is what a simulation injects into one task. The zero
// value injects nothing: no lateness, zero execution cost.
type SimTaskConfig struct {
	// Jitter is the wake-up lateness added to each release.
	Jitter Jitter
	// Cost is the declared execution time of each cycle: the task's
	// virtual clock advances by Cost between the start and the end of a
	// cycle, so a Cost above the period overruns deterministically.
	Cost time.Duration
	// RealExec charges the real time the body took instead of Cost. The
	// simulation then depends on the host and is no longer reproducible.
	RealExec bool
}

type simFault struct {
	cycle int64
	value int64 // stall: periods; overrun: extra ns
}

// simTaskState is the per-name injection plan, kept across binds.
type simTaskState struct {
	cfg      SimTaskConfig
	stalls   []simFault
	overruns []simFault
}

type clockStep struct{ at, by int64 }

// Sim is the simulated flavor ("sim"): a virtual clock, and a scheduler
// that runs the tasks' bodies one at a time.
//
// The model. A task is released at each deadline plus the lateness
// injected for it (Jitter, stalls), or at once when the deadline passed
// while its previous cycle ran; its cycle then lasts the declared Cost
// (or the real time the body took, with RealExec). During the body the
// task's clock (TaskContext.Now) reads the cycle's start; WaitPeriod sees
// the end. Costs do not delay other tasks: each task behaves as if it had
// a CPU of its own — unless SharedCPU puts them all on one, scheduled
// like SCHED_FIFO (a release waits for higher or equal priorities that
// are executing; a higher priority lengthens the cycles it preempts).
// What running one at a time fixes is the order in which bodies run, and
// so see each other's writes: by start instant, then priority (highest
// first), then the order the tasks were created (SimConfig.Order; without
// it, the order they were started). Virtual time (Now, RT.Now) is the
// start of the cycle being run. A task that is not periodic costs at
// least 1 µs a cycle, so that it cannot stop the clock. The nanosleep
// wake mode is modelled by default; timerfd and posix-timer are modelled
// as periodic timers that count missed expirations.
//
// The turn. At any moment at most one goroutine runs the simulation: the
// controller call (Run) that started it, or the virtual thread it gave
// the turn to. Whoever has the turn owns the run queue and the clock
// (sim_sched.go); at a scheduling point (the end of a cycle, a wait, a
// pause, an exit) it picks the next thread and sends it the turn on that
// thread's channel, or gives it back to the controller. A thread that is
// still first keeps the turn without a goroutine switch, so a lone task
// costs no switch at all. What other goroutines do — a task starting, a
// paused task resuming, a Stop — goes into an inbox under mu, which the
// turn's owner takes in at its next pick, in a fixed order. A Stop made
// while no controller call runs starts a stop drive, a controller call
// nobody waits for (sim_control.go).
//
// Its controller methods (Run, Configure, SetTask, Inject*, Trace) are
// for one goroutine at a time — the test — and refuse calls from task
// bodies (ErrSimBusy); Now is RT-safe.
type Sim struct {
	// Settings, under mu; read by the turn's owner.
	hang   time.Duration
	seed   uint64
	limit  int
	shared bool // SharedCPU

	// mu guards the inbox and the controller's state below; cond (on mu)
	// signals resumed threads settling, the controller coming free, and
	// the simulation dying.
	mu       sync.Mutex
	cond     sync.Cond
	ctlHeld  bool // a controller call or a stop drive holds the simulation
	running  bool // a controller call (Run) is running it: other calls are refused
	joins    []*simThread
	kicks    []*simThread
	resuming int          // resumed threads not yet back in the schedule
	threads  []*simThread // every thread ever bound, by seq
	plans    map[string]*simTaskState
	order    func() []string
	closed   bool
	broken   error

	pending atomic.Bool // the inbox has something, or the simulation died: take mu and look
	dead    atomic.Bool // closed or hung: no more scheduling
	driven  atomic.Bool // a controller was made for the simulation (Drive)
	back    chan struct{}

	// Owned by whoever has the turn (sim_sched.go).
	now      atomic.Int64 // also read by Now from any goroutine
	target   int64
	exclude  bool // a stop drive: only threads being stopped run
	runq     []*simThread
	steps    []clockStep
	stopNow  bool
	checking bool
	pred     func() bool
	goal     *simThread
	goalN    int64
	lost     string // why the goal thread left the schedule
	count    uint64
	digest   uint64
	ring     []SimRecord
	progress atomic.Uint64             // hand-offs, for the hang check
	holder   atomic.Pointer[simThread] // the thread with the turn, for the hang check
}

// NewSim returns a simulation at virtual time 0. rtapi opens one through
// the registry; tests of this package call it directly.
func NewSim(cfg SimConfig) *Sim {
	s := &Sim{back: make(chan struct{}, 1), plans: map[string]*simTaskState{}}
	s.cond.L = &s.mu
	s.Configure(cfg)
	return s
}

// Configure replaces the simulation's settings. Call it before starting
// tasks: the seed is taken by each task as it starts. It waits for a
// controller call in progress.
func (s *Sim) Configure(cfg SimConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.ctlHeld {
		s.cond.Wait()
	}
	s.seed = cfg.Seed
	s.shared = cfg.SharedCPU
	if cfg.Order != nil {
		s.order = cfg.Order
	}
	s.hang = cfg.HangTimeout
	if s.hang <= 0 {
		s.hang = SimDefaultHangTimeout
	}
	s.limit = cfg.TraceLimit
	if s.limit == 0 {
		s.limit = SimDefaultTraceLimit
	}
	s.ring = nil
	if s.limit > 0 {
		// A power of two, so that recording masks instead of dividing.
		s.ring = make([]SimRecord, 1<<bits.Len(uint(s.limit-1)))
	}
}

// Traits: a virtual clock, and virtual threads that need no OS thread of
// their own: a switch between goroutines locked to OS threads costs a
// futex round trip of the threads (measured ~140 µs on a 2-vCPU VM,
// against under 1 µs unlocked).
func (s *Sim) Traits() Traits { return Traits{VirtualClock: true} }

// Name is "sim".
func (s *Sim) Name() string { return SimName }

// RealTime is false: nothing about the host's scheduling is real-time.
func (s *Sim) RealTime() bool { return false }

// Now is the virtual time in nanoseconds: the release instant of the
// cycle being run, or where the last controller call stopped. RT-safe.
func (s *Sim) Now() int64 { return s.now.Load() }

// Drive records that a controller (package rtapi/sim) drives the virtual
// clock; Driven reports whether one does. Without one no task runs.
func (s *Sim) Drive() { s.driven.Store(true) }

// Driven reports whether Drive was called.
func (s *Sim) Driven() bool { return s.driven.Load() }

// Priorities is the Linux backends' range, 1 to 98.
func (s *Sim) Priorities() (lowest, highest int) { return simPrioLowest, simPrioHigh }

// MinPeriod is the Linux backends' 10 µs.
func (s *Sim) MinPeriod() time.Duration { return simMinPeriod }

// Bind creates the virtual thread of a starting task. Its first cycle is
// due at the current virtual time; it runs when the simulation reaches it.
func (s *Sim) Bind(spec ThreadSpec) (Waker, Binding, error) {
	wake, err := resolveWake(spec.Wake, WakeNanosleep)
	if err != nil {
		return nil, Binding{}, err
	}
	if spec.Period == 0 {
		wake = WakeNanosleep
	}
	th := &simThread{
		s:      s,
		name:   spec.Name,
		prio:   spec.Priority,
		period: spec.Period,
		timer:  wake != WakeNanosleep,
		turn:   make(chan struct{}, 1),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, Binding{}, errSimClosed
	}
	if s.broken != nil {
		return nil, Binding{}, s.broken
	}
	th.seq = int32(len(s.threads))
	th.at = s.now.Load()
	th.local = th.at
	th.applyPlan(s.plans[spec.Name], s.seed)
	s.threads = append(s.threads, th)
	s.joins = append(s.joins, th)
	s.pending.Store(true)
	return NewVirtualWaker(th), Binding{Priority: spec.Priority, Wake: wake, Virtual: true}, nil
}

// Close ends the simulation: every thread it still holds is woken and
// returns at once. Safe to call twice.
func (s *Sim) Close() error {
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
func (s *Sim) die() {
	s.dead.Store(true)
	s.pending.Store(true)
	s.cond.Broadcast()
}

// realNow is a monotonic real clock for RealExec.
func realNow() int64 { return int64(time.Since(realBase)) }

var realBase = time.Now()
