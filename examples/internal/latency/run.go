package latency

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/sim"
)

// Config is one measurement: tasks on an rtapi instance, how they wake and
// what they do each cycle.
type Config struct {
	// Options open the rtapi instance (flavor, VanillaFIFO, CPUs...).
	Options rtapi.Options
	// Tasks to run; each needs a Name and a Period. A zero Priority is
	// assigned rate-monotonically from Priority down.
	Tasks []TaskDef
	// Priority of the fastest task; 0 means the flavor's highest.
	Priority int
	// SamePriority runs every task without a Priority of its own at
	// Priority, as cyclictest runs its threads (unless --priospread),
	// instead of rate-monotonically.
	SamePriority bool
	// Loops, when positive, ends the run once a task has run that many
	// cycles (cyclictest -l: the first thread to finish ends the run).
	Loops int64
	// CPUs the tasks are pinned to, round robin; empty leaves placement
	// to rtapi (CPUAuto).
	CPUs []int
	// Wake, Overrun and HistogramBound go into every TaskSpec.
	Wake           rtapi.WakeMode
	Overrun        rtapi.OverrunPolicy
	HistogramBound time.Duration
	// Watchdog goes into every TaskSpec: 0 is rtapi's default, negative
	// turns it off. A latency measurement usually wants it off: a long
	// stall is a result to report, not a reason to fault the task.
	Watchdog time.Duration
	// Interference toggles rtapi's per-cycle interference counters
	// (Stats.Interference); Auto leaves them on.
	Interference rtapi.Toggle
	// Body is what each cycle does (nothing by default).
	Body Body
	// SimJitter is the wake-up lateness the sim flavor injects into every
	// task (sim.HistogramJitter of a recorded run, for instance); other
	// flavors ignore it. On sim a busy body costs its time on the virtual
	// clock (SimTaskConfig.Cost) instead of spinning.
	SimJitter sim.Jitter
	// OverflowCycles is how many cycle numbers of latency-histogram
	// overflows each task keeps (TaskStats.OverflowCycles), as cyclictest
	// keeps as many as its histogram has buckets; 0 keeps none.
	OverflowCycles int
	// Samples, when positive, keeps each task's last Samples wake-up
	// latencies (rounded up to a power of two) for Session.Samples, as
	// cyclictest -v does.
	Samples int
	// TraceMark, TraceStop and TraceDir go into every TaskSpec (rtapi's
	// trace hook). With TraceStop the run ends, as cyclictest -b's does,
	// once a task has stopped tracing (its Stats.TraceStopCycle).
	TraceMark time.Duration
	TraceStop bool
	TraceDir  string
	// OnStart, if set, is called once the tasks run, before the first
	// tick: the session's flavor and each task's policy are known then.
	OnStart func(*Session)
}

// TaskStats is a task's rtapi statistics plus what the measuring body saw.
type TaskStats struct {
	rtapi.Stats
	// Tid is the task thread's kernel id.
	Tid int
	// Act is the latest cycle's lateness as the body measured it on
	// entry (cyclictest's "Act" column).
	Act time.Duration
	// LastInterval, MaxInterval and MaxIntervalJitter are LinuxCNC
	// latency-test's "Last interval", "Max Interval" and "Max Jitter"
	// (its timedelta component): the time between the body's last two
	// starts, the longest such time, and the largest |interval − period|.
	LastInterval, MaxInterval, MaxIntervalJitter time.Duration
	// OverflowCycles are the numbers (from 0, cyclictest's count) of the
	// first cycles whose wake-up latency, as the body measured it, fell
	// past the histogram bound; at most Config.OverflowCycles of them.
	OverflowCycles []int64
}

// Session is a running measurement.
type Session struct {
	rt      *rtapi.RT
	tasks   []*rtapi.Task
	act     []atomic.Int64
	ivl     []intervals
	samples []sampleRing
	over    []overflowLog
	started time.Time
	// clock drives the virtual clock on the sim flavor (nil elsewhere);
	// simStart is the virtual time the tasks started at.
	clock    *sim.Controller
	simStart int64
	// loops: Config.Loops; a task that ran them ended as asked
	loops int64
}

// Start opens rtapi, creates one task per TaskDef and starts them. Bad
// settings that only the opened flavor can judge (priority range, period
// floor) are returned wrapped in ErrSpec.
func Start(cfg Config) (*Session, error) {
	if len(cfg.Tasks) == 0 {
		return nil, specErrf("no tasks to run")
	}
	rt, err := rtapi.Open(cfg.Options)
	if err != nil {
		if errors.Is(err, rtapi.ErrInvalid) {
			return nil, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		return nil, err
	}
	s := &Session{rt: rt, act: make([]atomic.Int64, len(cfg.Tasks)), ivl: make([]intervals, len(cfg.Tasks)), samples: make([]sampleRing, len(cfg.Tasks)), over: make([]overflowLog, len(cfg.Tasks)), loops: cfg.Loops}
	if err := s.create(cfg); err != nil {
		rt.Close()
		return nil, err
	}
	s.started = time.Now()
	if s.clock != nil {
		s.simStart = s.clock.Now()
	}
	for _, t := range s.tasks {
		if err := t.Start(); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Session) create(cfg Config) error {
	lo, hi := s.rt.PrioLowest(), s.rt.PrioHighest()
	top := cfg.Priority
	if top == 0 {
		top = hi
	}
	if top < lo || top > hi {
		return specErrf("priority %d outside the %s flavor's range [%d, %d]", top, s.rt.Flavor().Name, lo, hi)
	}
	defs := append([]TaskDef(nil), cfg.Tasks...)
	if cfg.SamePriority {
		for i := range defs {
			if defs[i].Priority == 0 {
				defs[i].Priority = top
			}
		}
	}
	AssignPriorities(defs, top, lo)
	spin := cfg.Body.Busy
	if clock, err := sim.New(s.rt); err == nil {
		// virtual time does not pass inside a body: the busy time is
		// declared as the cycle's cost instead of spun
		s.clock, spin = clock, 0
	}
	bound := cfg.HistogramBound
	if cfg.Body.Busy > 0 && bound <= cfg.Body.Busy {
		// the execution-time histogram must reach past the busy time
		bound = 2*cfg.Body.Busy + time.Millisecond
	}
	for i, d := range defs {
		cpu := rtapi.CPUAuto
		if len(cfg.CPUs) > 0 {
			cpu = rtapi.OnCPU(cfg.CPUs[i%len(cfg.CPUs)])
		}
		t, err := s.rt.NewTask(rtapi.TaskSpec{
			Name:           d.Name,
			Priority:       d.Priority,
			Period:         d.Period,
			CPU:            cpu,
			Wake:           cfg.Wake,
			Overrun:        cfg.Overrun,
			HistogramBound: bound,
			Watchdog:       cfg.Watchdog,
			Interference:   cfg.Interference,
			TraceMark:      cfg.TraceMark,
			TraceStop:      cfg.TraceStop,
			TraceDir:       cfg.TraceDir,
		}, measureBody(&s.act[i], &s.ivl[i], &s.samples[i], &s.over[i], spin, cfg.Loops))
		if err != nil {
			if errors.Is(err, rtapi.ErrInvalid) {
				return fmt.Errorf("%w: %w", ErrSpec, err)
			}
			return err
		}
		if s.clock != nil {
			if err := s.clock.SetTask(t, sim.TaskConfig{Jitter: cfg.SimJitter, Cost: cfg.Body.Busy}); err != nil {
				return fmt.Errorf("%w: %w", ErrSpec, err)
			}
		}
		if cfg.Samples > 0 {
			n := 1
			for n < min(cfg.Samples, 1<<20) {
				n <<= 1
			}
			s.samples[i].buf = make([]int64, n)
		}
		lat := t.Stats().Latency
		s.over[i].bound = int64(len(lat.Counts)) * int64(lat.Width)
		s.over[i].cycles = make([]int64, max(0, cfg.OverflowCycles))
		s.tasks = append(s.tasks, t)
	}
	return nil
}

// overflowLog keeps the first cycle numbers whose latency overflowed the
// histogram. Written by the task's body only; read after the task
// stopped, or up to n while it runs.
type overflowLog struct {
	bound  int64   // the latency histogram's bound, ns
	cycles []int64 // preallocated: the body never allocates
	n      atomic.Int64
}

func (o *overflowLog) note(late, cycle int64) {
	if late < o.bound {
		return
	}
	n := o.n.Load()
	if n < int64(len(o.cycles)) {
		o.cycles[n] = cycle
		o.n.Store(n + 1)
	}
}

// sampleRing keeps a task's last wake-up latencies: written by its body
// only, read by Session.Samples.
type sampleRing struct {
	buf []int64 // nil: none kept; else a power of two long
	n   atomic.Int64
}

func (r *sampleRing) note(late int64) {
	if r.buf == nil {
		return
	}
	n := r.n.Load()
	r.buf[n&int64(len(r.buf)-1)] = late
	r.n.Store(n + 1)
}

// Samples calls fn with task i's wake-up latencies from sample number
// from (0 is the first cycle) on, as far as they are kept (Config.Samples),
// and returns the number to continue from. It allocates nothing.
func (s *Session) Samples(i int, from int64, fn func(cycle int64, late time.Duration)) int64 {
	r := &s.samples[i]
	n := r.n.Load()
	if r.buf == nil {
		return n
	}
	from = max(from, n-int64(len(r.buf))) // older ones were overwritten
	for c := from; c < n; c++ {
		fn(c, time.Duration(r.buf[c&int64(len(r.buf)-1)]))
	}
	return n
}

// intervals are LinuxCNC's timedelta figures of a task, written by its
// body only.
type intervals struct{ last, max, jitter atomic.Int64 }

func (v *intervals) note(interval, period int64) {
	v.last.Store(interval)
	if interval > v.max.Load() {
		v.max.Store(interval)
	}
	j := interval - period
	if j < 0 {
		j = -j
	}
	if j > v.jitter.Load() {
		v.jitter.Store(j)
	}
}

func (o *overflowLog) list() []int64 { return append([]int64(nil), o.cycles[:o.n.Load()]...) }

// measureBody is the task body: note the cycle's lateness (and its
// number when it is past the histogram's bound), then busy-wait busy on
// the task's clock; after loops cycles (0: never) it returns.
// RT-safe.
func measureBody(act *atomic.Int64, ivl *intervals, samples *sampleRing, over *overflowLog, busy time.Duration, loops int64) func(tc *rtapi.TaskContext) error {
	return func(tc *rtapi.TaskContext) error {
		prev := int64(0)
		for tc.WaitPeriod() {
			now := tc.Now()
			late := now - tc.Release()
			act.Store(late)
			samples.note(late)
			if prev != 0 {
				ivl.note(now-prev, int64(tc.Period()))
			}
			prev = now
			over.note(late, tc.Cycle()-1) // cyclictest counts cycles from 0
			if busy > 0 {
				for end := now + int64(busy); tc.Now() < end; {
				}
			}
			if loops > 0 && tc.Cycle() >= loops {
				return nil
			}
		}
		return nil
	}
}

// RT is the rtapi instance the session runs on.
func (s *Session) RT() *rtapi.RT { return s.rt }

// Elapsed is the time since the tasks started: virtual time on the sim
// flavor.
func (s *Session) Elapsed() time.Duration {
	if s.clock != nil {
		return time.Duration(s.clock.Now() - s.simStart)
	}
	return time.Since(s.started)
}

// Snapshot reads every task's statistics. It allocates; call it from an
// ordinary goroutine.
func (s *Session) Snapshot() []TaskStats {
	out := make([]TaskStats, len(s.tasks))
	for i, t := range s.tasks {
		v := &s.ivl[i]
		out[i] = TaskStats{Stats: t.Stats(), Tid: t.Tid(), Act: time.Duration(s.act[i].Load()), OverflowCycles: s.over[i].list(),
			LastInterval: time.Duration(v.last.Load()), MaxInterval: time.Duration(v.max.Load()), MaxIntervalJitter: time.Duration(v.jitter.Load())}
	}
	return out
}

// Failed reports a task that ended on its own (an error or a panic in its
// body, or no error before Config.Loops), or nil.
func (s *Session) Failed() error {
	for _, t := range s.tasks {
		select {
		case <-t.Done():
			if err := t.Wait(); err != nil {
				return err
			}
			if s.loops == 0 {
				return fmt.Errorf("task %s ended early", t.Name())
			}
		default:
		}
	}
	return nil
}

// looped reports whether a task ran Config.Loops cycles and ended.
func (s *Session) looped() bool {
	if s.loops == 0 {
		return false
	}
	for _, t := range s.tasks {
		select {
		case <-t.Done():
			return true
		default:
		}
	}
	return false
}

// anyDone is closed when a task ends: with Config.Loops, the end of the
// run. nil without Loops.
func (s *Session) anyDone() <-chan struct{} {
	if s.loops == 0 {
		return nil
	}
	done := make(chan struct{})
	var once sync.Once
	for _, t := range s.tasks {
		go func() {
			<-t.Done()
			once.Do(func() { close(done) })
		}()
	}
	return done
}

// breakPoll is how often a run with Config.TraceStop looks for a task
// that stopped tracing: cyclictest's main loop also wakes every 10 ms.
const breakPoll = 10 * time.Millisecond

// stoppedTracing reports whether a task's trace hook has stopped tracing
// (Config.TraceStop): cyclictest -b's end of the run.
func (s *Session) stoppedTracing() bool {
	for _, t := range s.tasks {
		if t.Stats().TraceStopCycle > 0 {
			return true
		}
	}
	return false
}

// Result is a finished measurement.
type Result struct {
	Flavor  rtapi.FlavorInfo
	Kernel  *kerneldetect.Report
	Elapsed time.Duration
	Tasks   []TaskStats
}

// Close stops the tasks, closes rtapi and takes the final statistics. The
// tasks are stopped by rtapi's Close, which hands out no spare P while it
// stops them one after another: each task's OwnP in the result is
// what it had while the set ran, not a P that a task ending first freed
// for its last moments. The first error a task ended with comes first,
// then Close's (which names a task that would not stop; its statistics
// are those it had then).
func (s *Session) Close() (Result, error) {
	elapsed := s.Elapsed()
	closeErr := s.rt.Close()
	var firstErr error
	for _, t := range s.tasks {
		select {
		case <-t.Done():
		default:
			continue // abandoned by rtapi's Close: closeErr says so
		}
		if err := t.Wait(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	r := Result{Flavor: s.rt.Flavor(), Kernel: s.rt.Kernel(), Elapsed: elapsed, Tasks: s.Snapshot()}
	if firstErr == nil {
		firstErr = closeErr
	}
	return r, firstErr
}

// Run starts cfg, lets it run for d (0: until ctx is done), calling tick
// with a snapshot every `every` (0: never), and returns the result. When
// ctx ends early, the result so far is returned with ctx's error.
func Run(ctx context.Context, cfg Config, d time.Duration, every time.Duration, tick func(elapsed time.Duration, ts []TaskStats)) (Result, error) {
	s, err := Start(cfg)
	if err != nil {
		return Result{}, err
	}
	if cfg.OnStart != nil {
		cfg.OnStart(s)
	}
	if s.clock != nil {
		return s.runSim(ctx, d, every, tick)
	}
	var end <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		end = timer.C
	}
	var ticks <-chan time.Time
	if every > 0 && tick != nil {
		t := time.NewTicker(every) // reporting cadence, not a real-time path
		defer t.Stop()
		ticks = t.C
	}
	looped := s.anyDone()
	var broke <-chan time.Time
	if cfg.TraceStop {
		t := time.NewTicker(breakPoll) // polls the statistics, not a real-time path
		defer t.Stop()
		broke = t.C
	}
	var runErr error
loop:
	for {
		select {
		case <-end:
			break loop
		case <-broke:
			if s.stoppedTracing() {
				break loop
			}
		case <-looped:
			runErr = s.Failed()
			break loop
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		case <-ticks:
			if err := s.Failed(); err != nil {
				runErr = err
				break loop
			}
			tick(s.Elapsed(), s.Snapshot())
		}
	}
	r, err := s.Close()
	return r, cmp.Or(runErr, err) // the run's error first
}

// runSim drives the sim flavor's virtual clock for d, as fast as the
// bodies run, calling tick every `every` of virtual time.
func (s *Session) runSim(ctx context.Context, d, every time.Duration, tick func(time.Duration, []TaskStats)) (Result, error) {
	if d <= 0 && s.loops == 0 {
		s.Close()
		return Result{}, specErrf("the sim flavor runs on a virtual clock: give a duration (-D) or a loop count, it cannot run until Ctrl-C")
	}
	if d <= 0 {
		d = 1<<63 - 1 // until a task ran its loops
	}
	step := d
	if every > 0 && tick != nil {
		step = every
	} else if s.loops > 0 {
		step = time.Second // until a task ran its loops
	}
	var runErr error
	for elapsed := time.Duration(0); elapsed < d; elapsed = s.Elapsed() {
		if runErr = ctx.Err(); runErr != nil {
			break
		}
		if runErr = s.clock.Advance(min(step, d-elapsed)); runErr != nil {
			break
		}
		if runErr = s.Failed(); runErr != nil {
			break
		}
		if every > 0 && tick != nil {
			tick(s.Elapsed(), s.Snapshot())
		}
		if s.looped() {
			break
		}
	}
	r, err := s.Close()
	return r, cmp.Or(runErr, err) // the run's error first
}
