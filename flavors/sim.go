package flavors

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
	Register(Descriptor{Name: SimName, ID: 9, RealTime: false, Open: openSim})
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
var ErrSimTaskLeft = errors.New("task left the schedule")

// ErrSimBusy is what a controller call made while another runs returns
// (from a task body, a predicate, or a second goroutine).
var ErrSimBusy = errors.New("sim: controller called while the simulation runs (from a task body or a RunUntil predicate?)")

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

// drive modes: who holds the simulation while it runs
const (
	driveController = iota // a controller call waits on back
	driveDetached          // a Stop from an idle caller: nobody waits
)

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
// are executing; a higher priority lengthens the cycles it preempts). What running one at a time fixes is the order in
// which bodies run, and so see each other's writes: by start instant,
// then priority (highest first), then the order the tasks were created
// (SimConfig.Order; without it, the order they were started).
// Virtual time (Now, rtapi.Now) is the start of the cycle being run. A
// task that is not periodic costs at least 1 µs a cycle, so that it
// cannot stop the clock. The nanosleep wake mode is modelled by default;
// timerfd and posix-timer are modelled as periodic timers that count
// missed expirations.
//
// The hand-off. Whoever holds the simulation — a task at a scheduling
// point (the end of a cycle, a wait, a pause, an exit), or the controller
// — picks the next runnable thread and wakes it through its channel; a
// thread that is still first carries on without a goroutine switch, so a
// lone task costs no switch at all. Its threads are virtual (Traits):
// rtapi runs them on ordinary goroutines.
//
// Its controller methods (Run, Configure, SetTask, Inject*, Trace) are
// for one goroutine at a time — the test — and refuse calls from task
// bodies (ErrSimBusy); Now is RT-safe.
type Sim struct {
	hang   time.Duration
	seed   uint64
	limit  int
	shared bool // SharedCPU

	// ctl is held while the simulation runs: by a controller call, or
	// by a thread finishing a detached stop drive (it unlocks it).
	ctl     sync.Mutex
	running atomic.Bool // a controller call is running the simulation
	mode    int
	back    chan struct{}

	// Written only by the holder of the simulation ("baton").
	now      atomic.Int64
	target   int64
	exclude  bool // detached drive: only threads being stopped run
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
	progress atomic.Uint64
	holder   atomic.Pointer[simThread]

	// Shared with other goroutines, under kickMu.
	kickMu   sync.Mutex
	kickCond sync.Cond
	flag     atomic.Bool // joins, kicks, dead or closed to look at
	joins    []*simThread
	kicks    []*simThread
	resuming int
	threads  []*simThread // every thread ever bound, by seq
	plans    map[string]*simTaskState
	order    func() []string
	dead     atomic.Bool // closed or hung: no more scheduling
	closed   bool
	broken   error
}

// NewSim returns a simulation at virtual time 0. rtapi opens one through
// the registry; tests of this package call it directly.
func NewSim(cfg SimConfig) *Sim {
	s := &Sim{back: make(chan struct{}, 1), plans: map[string]*simTaskState{}}
	s.kickCond.L = &s.kickMu
	s.Configure(cfg)
	return s
}

// Configure replaces the simulation's settings. Call it before starting
// tasks: the seed is taken by each task as it starts.
func (s *Sim) Configure(cfg SimConfig) {
	s.ctl.Lock()
	defer s.ctl.Unlock()
	s.seed = cfg.Seed
	s.shared = cfg.SharedCPU
	if cfg.Order != nil {
		s.kickMu.Lock()
		s.order = cfg.Order
		s.kickMu.Unlock()
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

// Priorities is the Linux backends' range, 1 to 98.
func (s *Sim) Priorities() (lowest, highest int) { return simPrioLowest, simPrioHigh }

// MinPeriod is the Linux backends' 10 µs.
func (s *Sim) MinPeriod() time.Duration { return simMinPeriod }

// Bind creates the virtual thread of a starting task. Its first cycle is
// due at the current virtual time; it runs when the simulation reaches it.
func (s *Sim) Bind(spec ThreadSpec) (*Waker, Binding, error) {
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
		wake:   make(chan struct{}, 1),
	}
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
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
	s.flag.Store(true)
	return NewVirtualWaker(th), Binding{Priority: spec.Priority, Wake: wake}, nil
}

// Close ends the simulation: every thread it still holds is woken and
// returns at once. Safe to call twice.
func (s *Sim) Close() error {
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.dead.Store(true)
	s.flag.Store(true)
	for _, th := range s.threads {
		select {
		case th.wake <- struct{}{}:
		default:
		}
	}
	s.kickCond.Broadcast()
	return nil
}

// plan returns the injection plan for name, creating it. Under kickMu.
func (s *Sim) plan(name string) *simTaskState {
	p := s.plans[name]
	if p == nil {
		p = &simTaskState{}
		s.plans[name] = p
	}
	return p
}

// live returns the bound, not yet exited thread of name. Under kickMu.
func (s *Sim) live(name string) *simThread {
	for i := len(s.threads) - 1; i >= 0; i-- {
		if th := s.threads[i]; th.name == name && !th.exited {
			return th
		}
	}
	return nil
}

// SetTask sets what is injected into the task named name, now if it
// runs and whenever it (re)starts.
func (s *Sim) SetTask(name string, cfg SimTaskConfig) error {
	if cfg.Cost < 0 {
		return fmt.Errorf("sim: task %q: negative cost %v: %w", name, cfg.Cost, ErrInvalid)
	}
	if err := cfg.Jitter.validate(); err != nil {
		return fmt.Errorf("sim: task %q: %w", name, err)
	}
	return s.idle(func() error {
		p := s.plan(name)
		p.cfg = cfg
		if th := s.live(name); th != nil {
			th.cost = int64(cfg.Cost)
			th.realExec = cfg.RealExec
			th.jitter.set(cfg.Jitter)
		}
		return nil
	})
}

// InjectStall delays the release of cycle cycle (1 or later) of the task
// named name by periods periods: the thread is not woken in that time, as
// if the machine had stalled it.
func (s *Sim) InjectStall(name string, cycle, periods int64) error {
	if cycle < 1 || periods < 1 {
		return fmt.Errorf("sim: task %q: stall of %d periods at cycle %d: cycle and periods must be at least 1: %w",
			name, periods, cycle, ErrInvalid)
	}
	return s.inject(name, cycle, periods, false)
}

// InjectOverrun makes cycle cycle (0 or later) of the task named name take
// extra more execution time than declared; extra 0 means one period, which
// makes it miss exactly its next release.
func (s *Sim) InjectOverrun(name string, cycle int64, extra time.Duration) error {
	if cycle < 0 || extra < 0 {
		return fmt.Errorf("sim: task %q: overrun %v at cycle %d: %w", name, extra, cycle, ErrInvalid)
	}
	return s.inject(name, cycle, int64(extra), true)
}

func (s *Sim) inject(name string, cycle, value int64, overrun bool) error {
	return s.idle(func() error {
		th := s.live(name)
		if th != nil && cycle < th.cycles+1 && !(overrun && cycle == th.cycles) {
			return fmt.Errorf("sim: task %q: cycle %d has already run (now at cycle %d): %w",
				name, cycle, th.cycles, ErrInvalid)
		}
		p := s.plan(name)
		f := simFault{cycle: cycle, value: value}
		if overrun {
			p.overruns = insertFault(p.overruns, f)
		} else {
			p.stalls = insertFault(p.stalls, f)
		}
		if th != nil {
			if overrun {
				th.overruns = insertFault(th.overruns[th.oi:], f)
				th.oi = 0
			} else {
				th.stalls = insertFault(th.stalls[th.si:], f)
				th.si = 0
			}
		}
		return nil
	})
}

func insertFault(fs []simFault, f simFault) []simFault {
	out := make([]simFault, 0, len(fs)+1)
	i := 0
	for i < len(fs) && fs[i].cycle <= f.cycle {
		i++
	}
	out = append(out, fs[:i]...)
	out = append(out, f)
	return append(out, fs[i:]...)
}

// InjectClockStep makes virtual time jump forward by by at instant at:
// nothing runs in between, and every thread asleep across the jump wakes
// at its end, late — an SMI or a paused VM, as the tasks see it.
func (s *Sim) InjectClockStep(at int64, by time.Duration) error {
	if by <= 0 {
		return fmt.Errorf("sim: clock step by %v: only forward steps exist on a monotonic clock: %w", by, ErrInvalid)
	}
	return s.idle(func() error {
		if at < s.now.Load() {
			return fmt.Errorf("sim: clock step at %v is before the virtual time %v: %w",
				time.Duration(at), time.Duration(s.now.Load()), ErrInvalid)
		}
		i := 0
		for i < len(s.steps) && s.steps[i].at <= at {
			i++
		}
		s.steps = append(s.steps[:i], append([]clockStep{{at, int64(by)}}, s.steps[i:]...)...)
		return nil
	})
}

// idle runs fn with the simulation idle: controller lock held, pending
// resumes settled, kickMu held.
func (s *Sim) idle(fn func() error) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.ctl.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
	for s.resuming > 0 && !s.closed {
		s.kickCond.Wait()
	}
	return fn()
}

// lock takes the controller lock, waiting for a detached stop to finish,
// but refuses a call made while a controller call runs: from a task body
// (or a predicate) it could only deadlock.
func (s *Sim) lock() error {
	if s.running.Load() {
		return errSimBusy
	}
	s.ctl.Lock()
	return nil
}

func (s *Sim) usable() error {
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
	if s.closed {
		return errSimClosed
	}
	return s.broken
}

// Run lets virtual time advance to target, running every release due up
// to and including it. With pred set it stops as soon as pred returns true
// after a cycle ends; with goal set it stops when that task (by name) has
// completed goalCycles more cycles. It returns whether it stopped on pred
// or goal, and an error when the simulation is closed, a task hung, or the
// goal task left the schedule. Only one Run runs at a time.
func (s *Sim) Run(target int64, pred func() bool, goal string, goalCycles int64) (bool, error) {
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.ctl.Unlock()
	s.running.Store(true)
	defer s.running.Store(false)
	if err := s.usable(); err != nil {
		return false, err
	}
	if target < s.now.Load() {
		return false, fmt.Errorf("sim: cannot go back from %v to %v: %w",
			time.Duration(s.now.Load()), time.Duration(target), ErrInvalid)
	}
	if !s.merge() {
		return false, s.usable()
	}
	s.mode, s.target, s.exclude = driveController, target, false
	s.stopNow, s.pred, s.goal, s.lost = false, pred, nil, ""
	if goal != "" {
		s.kickMu.Lock()
		th := s.live(goal)
		s.kickMu.Unlock()
		if th == nil {
			return false, fmt.Errorf("sim: task %q is not running: %w", goal, ErrInvalid)
		}
		if th.suspended.Load() {
			return false, fmt.Errorf("sim: task %q is paused: %w", goal, ErrSimTaskLeft)
		}
		s.goal, s.goalN = th, th.cycles+goalCycles
	}
	s.checking = s.pred != nil || s.goal != nil
	defer func() { s.pred, s.goal, s.checking = nil, nil, false }()
	if pred != nil && pred() {
		return true, nil
	}
	if s.goal != nil && s.goal.cycles >= s.goalN {
		return true, nil
	}
	if next := s.pick(); next != nil {
		s.handoff(next)
		if err := s.await(); err != nil {
			return false, err
		}
	}
	if s.dead.Load() {
		return false, s.usable()
	}
	if s.stopNow {
		s.stopNow = false
		if s.lost != "" {
			return false, fmt.Errorf("sim: task %q %s before completing its cycles: %w", goal, s.lost, ErrSimTaskLeft)
		}
		return true, nil
	}
	// Nothing more is due up to target: steps before it still happen.
	for len(s.steps) > 0 && s.steps[0].at <= target {
		s.applyStep()
	}
	if target > s.now.Load() {
		s.now.Store(target)
	}
	return false, nil
}

// await waits for the simulation to come back to the controller, and
// declares the holder hung when nothing progressed for a hang timeout.
func (s *Sim) await() error {
	last, lastNow := s.progress.Load(), s.now.Load()
	timer := time.NewTimer(s.hang)
	defer timer.Stop()
	for {
		select {
		case <-s.back:
			return nil
		case <-timer.C:
		}
		if p, n := s.progress.Load(), s.now.Load(); p != last || n != lastNow {
			last, lastNow = p, n
			timer.Reset(s.hang)
			continue
		}
		err := &HangError{Timeout: s.hang, Now: s.now.Load()}
		if th := s.holder.Load(); th != nil {
			err.Task = th.name // set before the thread was published
		}
		s.kickMu.Lock()
		s.broken = err
		s.dead.Store(true)
		s.flag.Store(true)
		s.kickCond.Broadcast()
		s.kickMu.Unlock()
		return err
	}
}

// merge takes in what other goroutines queued: started threads, resumed
// threads, stop requests. It waits for resumed threads to rejoin first,
// so that they rejoin at a deterministic virtual time. It returns false
// when the simulation is dead. Called by the holder.
func (s *Sim) merge() bool {
	s.kickMu.Lock()
	defer s.kickMu.Unlock()
	for s.resuming > 0 && !s.closed {
		s.kickCond.Wait()
	}
	if s.dead.Load() {
		return false
	}
	s.flag.Store(false)
	now := s.now.Load()
	if len(s.joins) > 0 {
		s.rerank()
		// Resumed threads rejoin in whatever order their goroutines
		// ran: put them in a fixed one.
		slices.SortFunc(s.joins, func(a, b *simThread) int { return int(a.seq - b.seq) })
	}
	for _, th := range s.joins {
		if th.rejoined {
			th.rejoined = false
			s.record(th, SimResume, th.cycles, now, 0)
			if th.stallBy != 0 {
				s.record(th, SimStall, th.cycles, th.stallAt, th.stallBy)
				th.stallBy = 0
			}
		}
		th.queued = true
		s.runq = append(s.runq, th)
	}
	s.joins = s.joins[:0]
	for _, th := range s.kicks {
		if th.exited {
			continue
		}
		th.stopReq = true
		if th.queued && th.at > now {
			th.at = now
		}
	}
	s.kicks = s.kicks[:0]
	return true
}

// pick chooses the thread to run next and takes it off the run queue, or
// returns nil when the simulation must stop (target reached, a stop
// condition met, nothing runnable, or dead). Called by the holder.
func (s *Sim) pick() *simThread {
	if s.flag.Load() && !s.merge() {
		return nil
	}
	if s.stopNow {
		return nil
	}
	for {
		bi := -1
		for i, th := range s.runq {
			if s.exclude && !th.stopReq {
				continue
			}
			if bi < 0 || th.before(s.runq[bi]) {
				bi = i
			}
		}
		if bi < 0 {
			return nil
		}
		best := s.runq[bi]
		if !s.exclude {
			if len(s.steps) > 0 && s.steps[0].at <= best.at && s.steps[0].at <= s.target {
				s.applyStep()
				continue
			}
			if s.shared && !best.executing && s.cpuBusy(best) {
				continue // best.at moved to when the CPU is free for it
			}
			if best.at > s.target {
				return nil
			}
		}
		last := len(s.runq) - 1
		s.runq[bi] = s.runq[last]
		s.runq[last] = nil
		s.runq = s.runq[:last]
		best.queued = false
		if best.at > s.now.Load() {
			s.now.Store(best.at)
		}
		return best
	}
}

// cpuBusy delays a release while a task of higher or equal priority is
// executing on the shared CPU, and reports whether it did. Called by the
// holder.
func (s *Sim) cpuBusy(th *simThread) bool {
	busy := th.at
	for _, o := range s.runq {
		if o.executing && o.prio >= th.prio && o.at > busy {
			busy = o.at
		}
	}
	if busy == th.at {
		return false
	}
	th.at = busy
	return true
}

// preempt lengthens the cycles of lower-priority tasks executing when th
// started its cycle at start, by th's cost. Called by the holder.
func (s *Sim) preempt(th *simThread, start, cost int64) {
	for _, o := range s.runq {
		if o.executing && o.prio < th.prio && o.at > start {
			o.at += cost
		}
	}
}

// applyStep makes the first pending clock step happen. Called by the holder.
func (s *Sim) applyStep() {
	st := s.steps[0]
	s.steps = s.steps[1:]
	end := st.at + st.by
	for _, th := range s.runq {
		if th.at >= st.at && th.at < end {
			th.at = end
		}
	}
	if end > s.now.Load() {
		s.now.Store(end)
	}
	s.record(nil, SimClockStep, 0, st.at, st.by)
}

// handoff gives the simulation to next, or back to whoever drives it.
// Called by the holder.
func (s *Sim) handoff(next *simThread) {
	s.progress.Store(s.progress.Load() + 1) // the hang check watches hand-offs and the clock
	s.holder.Store(next)
	if next != nil {
		next.wake <- struct{}{}
		return
	}
	if s.mode == driveController {
		select {
		case s.back <- struct{}{}:
		default: // a controller that gave up on a hung task left a token
		}
		return
	}
	s.exclude = false
	s.ctl.Unlock()
	if !s.dead.Load() {
		s.drive()
	}
}

// drive runs queued stop requests when nobody else drives the simulation:
// a Stop from the test between controller calls. The stopped thread runs
// to its exit in virtual time, and unlocks ctl when it hands back.
func (s *Sim) drive() {
	for s.flag.Load() && s.ctl.TryLock() {
		if !s.merge() {
			s.ctl.Unlock()
			return
		}
		s.mode, s.exclude = driveDetached, true
		if next := s.pick(); next != nil {
			s.holder.Store(next)
			next.wake <- struct{}{}
			return
		}
		s.exclude = false
		s.ctl.Unlock()
	}
}

// record appends a trace record and folds it into the digest. Called by
// the holder. RT-safe.
func (s *Sim) record(th *simThread, kind SimEventKind, cycle, t, v int64) {
	r := SimRecord{Thread: -1, Kind: kind, Cycle: cycle, Time: t, Value: v}
	if th != nil {
		r.Thread = th.seq
	}
	h := s.digest ^ uint64(uint32(r.Thread))<<8 ^ uint64(kind)
	h = (h ^ uint64(cycle)) * 0x100000001b3
	h = (h ^ uint64(t)) * 0x100000001b3
	h = (h ^ uint64(v)) * 0x100000001b3
	s.digest = h*0x9e3779b97f4a7c15 + 1
	if s.ring != nil {
		s.ring[s.count&uint64(len(s.ring)-1)] = r
	}
	s.count++
}

// SimTrace is a copy of a simulation's trace.
type SimTrace struct {
	// Names are the tasks' names, indexed by SimRecord.Thread.
	Names []string
	// Records are the most recent records, oldest first.
	Records []SimRecord
	// Count is how many records were made in all; Digest is a hash of
	// all of them, equal between two runs exactly when their traces are.
	Count  uint64
	Digest uint64
}

// Trace copies the trace. Call it between controller calls.
func (s *Sim) Trace() (SimTrace, error) {
	var tr SimTrace
	err := s.idle(func() error {
		tr.Names = make([]string, len(s.threads))
		for i, th := range s.threads {
			tr.Names[i] = th.name
		}
		tr.Count, tr.Digest = s.count, s.digest
		n := min(s.count, uint64(max(s.limit, 0)))
		tr.Records = make([]SimRecord, 0, n)
		for i := s.count - n; i < s.count; i++ {
			tr.Records = append(tr.Records, s.ring[i&uint64(len(s.ring)-1)])
		}
		return nil
	})
	return tr, err
}

// simThread is the virtual thread of one running task. Its fields belong
// to whoever holds the simulation, except where marked.
type simThread struct {
	s      *Sim
	seq    int32 // start order
	rank   int   // creation order (SimConfig.Order), by the holder
	name   string
	prio   int
	period int64
	timer  bool // emulate a periodic timer (timerfd, POSIX timer)
	wake   chan struct{}

	at      int64 // when it is next runnable
	local   int64 // its clock: the start of the current cycle, or its end
	cycles  int64 // completed cycles
	queued  bool
	stopReq bool
	// executing: parked at the end of a cycle on the shared CPU, its end
	// (at) still to be lengthened by preemption.
	executing bool
	exited    bool // under kickMu
	rejoined  bool // under kickMu

	// Owned by the thread's goroutine.
	offClock      bool
	stallAt       int64 // a stall drawn while rejoining, for merge to record
	stallBy       int64
	gridNext      int64
	realStart     int64
	suspended     atomic.Bool
	resumeCounted bool // under kickMu

	cost     int64
	realExec bool
	jitter   jitterSource
	stalls   []simFault
	si       int
	overruns []simFault
	oi       int
}

func (th *simThread) applyPlan(p *simTaskState, seed uint64) {
	h := fnv.New64a()
	h.Write([]byte(th.name))
	th.jitter.seed(seed, h.Sum64())
	if p == nil {
		return
	}
	th.cost = int64(p.cfg.Cost)
	th.realExec = p.cfg.RealExec
	th.jitter.set(p.cfg.Jitter)
	th.stalls = append([]simFault(nil), p.stalls...)
	th.overruns = append([]simFault(nil), p.overruns...)
}

// before orders runnable threads: earlier first, then higher priority,
// then the one started first.
func (th *simThread) before(o *simThread) bool {
	if th.at != o.at {
		return th.at < o.at
	}
	if th.prio != o.prio {
		return th.prio > o.prio
	}
	if th.rank != o.rank {
		return th.rank < o.rank
	}
	return th.seq < o.seq
}

// rerank gives every live thread its place in creation order. Called by
// the holder in merge, when threads joined.
func (s *Sim) rerank() {
	if s.order == nil {
		return
	}
	names := s.order()
	for _, th := range s.threads {
		if th.exited {
			continue
		}
		th.rank = len(names) + int(th.seq) // not a task any more: last
		for i, n := range names {
			if n == th.name {
				th.rank = i
				break
			}
		}
	}
}

// yield puts th back on the run queue at th.at and runs whoever is next;
// it returns when th is chosen again (at once when it is still first).
func (th *simThread) yield() {
	s := th.s
	if len(s.runq) == 0 && !s.flag.Load() && !s.stopNow && !s.exclude && th.at <= s.target &&
		(len(s.steps) == 0 || s.steps[0].at > th.at) {
		// Alone and still due: no one to hand over to. (Progress shows
		// as virtual time moving: the hang check watches both.)
		if th.at > s.now.Load() {
			s.now.Store(th.at)
		}
		return
	}
	th.queued = true
	s.runq = append(s.runq, th)
	next := s.pick()
	if next == th {
		return
	}
	s.handoff(next)
	<-th.wake
}

// Now is the thread's virtual clock. RT-safe.
func (th *simThread) Now() int64 {
	if th.offClock {
		return th.s.now.Load()
	}
	return th.local
}

// Arm sets the periodic grid a timer-mode thread wakes on.
func (th *simThread) Arm(first, period int64) error {
	th.gridNext = first
	th.period = period
	return nil
}

// Begin waits for the first cycle's turn.
func (th *simThread) Begin() {
	<-th.wake
	if th.s.dead.Load() {
		return
	}
	th.local = max(th.local, th.at)
	th.realStart = realNow()
	th.s.record(th, SimStart, 0, th.local, 0)
}

// EndCycle charges the cycle's cost, lets earlier work run, and returns
// the cycle's end. RT-safe.
func (th *simThread) EndCycle() int64 {
	s := th.s
	if s.dead.Load() {
		return th.local
	}
	cost := th.cost
	if th.realExec {
		cost = realNow() - th.realStart
	}
	for th.oi < len(th.overruns) && th.overruns[th.oi].cycle <= th.cycles {
		if f := th.overruns[th.oi]; f.cycle == th.cycles {
			extra := f.value
			if extra == 0 {
				extra = th.period
			}
			cost += extra
			s.record(th, SimOverrun, th.cycles, th.local, extra)
		}
		th.oi++
	}
	if th.period == 0 {
		cost = max(cost, simQuantum)
	}
	start, end := th.local, th.local+cost
	if s.shared {
		s.preempt(th, start, cost)
	} else {
		s.record(th, SimEnd, th.cycles, end, cost)
	}
	th.cycles++
	th.local, th.at = end, end
	if s.checking {
		s.check(th)
	}
	th.executing = s.shared
	th.yield()
	th.executing = false
	if s.dead.Load() {
		return end
	}
	if s.shared {
		// Preempted while it ran: it ended later than its cost says.
		end = max(end, th.at)
		s.record(th, SimEnd, th.cycles-1, end, end-start)
	}
	th.local = max(th.local, th.at)
	if th.realExec {
		th.realStart = realNow()
	}
	return end
}

// check stops the run when its condition holds. Called by the holder.
func (s *Sim) check(th *simThread) {
	if s.goal != nil && s.goal == th && th.cycles >= s.goalN {
		s.stopNow = true
	}
	if s.pred != nil && s.pred() {
		s.stopNow = true
	}
}

// Wait sleeps until the release at deadline (or, in timer mode, the next
// grid point) plus the injected lateness. RT-safe.
func (th *simThread) Wait(deadline int64) (int64, uint64, error) {
	s := th.s
	rejoin := th.offClock
	if rejoin {
		th.offClock = false
		th.local = s.now.Load()
	}
	if s.dead.Load() {
		if rejoin {
			th.uncount()
		}
		return th.local, 1, errSimClosed
	}
	expected := deadline
	if th.timer {
		expected = th.gridNext
	}
	wake := th.local
	if expected > th.local {
		wake = expected + th.lateness(expected, rejoin)
	}
	th.at = wake
	if rejoin {
		th.rejoin()
	} else {
		th.yield()
	}
	if s.dead.Load() {
		return th.local, 1, errSimClosed
	}
	if th.stopReq {
		// Stopped while asleep: return to let WaitPeriod see it.
		th.local = max(th.local, th.at)
		return max(th.local, deadline), 1, nil
	}
	th.local = max(th.local, th.at)
	releases := uint64(1)
	if th.timer && th.period > 0 && th.local >= th.gridNext {
		n := (th.local-th.gridNext)/th.period + 1
		th.gridNext += n * th.period
		releases = uint64(n)
		expected = th.gridNext - th.period
	}
	s.record(th, SimWake, th.cycles, th.local, th.local-expected)
	if th.realExec {
		th.realStart = realNow()
	}
	return th.local, releases, nil
}

// lateness draws the wake-up lateness of the coming release, with any
// stall injected for it.
func (th *simThread) lateness(release int64, outside bool) int64 {
	l := th.jitter.sample()
	for th.si < len(th.stalls) && th.stalls[th.si].cycle <= th.cycles {
		if f := th.stalls[th.si]; f.cycle == th.cycles {
			d := f.value * th.period
			l += d
			if outside {
				// Not holding the simulation: merge records it.
				th.stallAt, th.stallBy = release, d
			} else {
				th.s.record(th, SimStall, th.cycles, release, d)
			}
		}
		th.si++
	}
	return l
}

// rejoin puts a resumed thread back in the schedule from outside it (the
// thread does not hold the simulation) and waits for its turn.
func (th *simThread) rejoin() {
	s := th.s
	s.kickMu.Lock()
	th.suspended.Store(false)
	th.rejoined = true
	s.joins = append(s.joins, th)
	s.flag.Store(true)
	if th.resumeCounted {
		th.resumeCounted = false
		s.resuming--
		s.kickCond.Broadcast()
	}
	s.kickMu.Unlock()
	<-th.wake
}

// uncount tells merges and Kick no longer to wait for th.
func (th *simThread) uncount() {
	s := th.s
	s.kickMu.Lock()
	if th.resumeCounted {
		th.resumeCounted = false
		s.resuming--
		s.kickCond.Broadcast()
	}
	s.kickMu.Unlock()
}

// Suspend takes a pausing task out of the schedule and hands the
// simulation on; the task then blocks outside it until Resume.
func (th *simThread) Suspend() {
	s := th.s
	if th.offClock {
		// Again, from outside the schedule: woken but still paused.
		// Merges must not wait for it any more.
		th.uncount()
		return
	}
	th.offClock = true
	th.suspended.Store(true)
	if s.dead.Load() {
		return
	}
	s.record(th, SimPause, th.cycles, th.local, 0)
	if s.goal == th {
		s.stopNow, s.lost = true, "was paused"
	}
	s.handoff(s.pick())
}

// Close is called as the task's body has returned.
func (th *simThread) Close() error {
	s := th.s
	s.kickMu.Lock()
	if th.exited {
		s.kickMu.Unlock()
		return nil
	}
	th.exited = true
	outside := th.offClock
	if th.resumeCounted {
		th.resumeCounted = false
		s.resuming--
		s.kickCond.Broadcast()
	}
	s.kickMu.Unlock()
	if outside {
		return nil
	}
	if s.dead.Load() {
		// Only the holder gives the simulation back (a detached drive
		// must unlock ctl exactly once).
		if s.holder.CompareAndSwap(th, nil) {
			s.holder.Store(th)
			s.handoff(nil)
		}
		return nil
	}
	s.record(th, SimExit, th.cycles, th.local, 0)
	if s.goal == th {
		s.stopNow, s.lost = true, "ended"
	}
	s.handoff(s.pick())
	return nil
}

// Kick is told that Stop or Resume changed the task's control word.
// Called from any goroutine, before the task's own wake-up.
func (th *simThread) Kick(stop bool) {
	s := th.s
	s.kickMu.Lock()
	queued := false
	switch {
	case th.exited:
	case th.suspended.Load():
		// Woken on its own channel, it rejoins (Resume) or exits (Stop):
		// merges wait for that.
		if !th.resumeCounted {
			th.resumeCounted = true
			s.resuming++
			s.flag.Store(true) // the holder's next pick waits for it
		}
		if !stop {
			// Resume waits until the task is back in the schedule, so
			// that nothing (a Stop, a Pause) can overtake its wake-up and
			// the outcome never depends on goroutine timing. Its way back
			// runs no user code and takes no task lock.
			for th.resumeCounted && !s.dead.Load() {
				s.kickCond.Wait()
			}
		}
	case stop:
		s.kicks = append(s.kicks, th)
		s.flag.Store(true)
		queued = true
	}
	dead := s.dead.Load()
	s.kickMu.Unlock()
	if !queued {
		return
	}
	if dead {
		// Nobody schedules any more: wake it directly.
		select {
		case th.wake <- struct{}{}:
		default:
		}
		return
	}
	s.drive()
}

// realNow is a monotonic real clock for RealExec.
func realNow() int64 { return int64(time.Since(realBase)) }

var realBase = time.Now()
