// Package watchdog catches runaway real-time threads: rtapi's watchdog,
// without rtapi's tasks (docs/GC.md, "Watchdog").
//
// A Dog is one thread at SCHED_FIFO above the watched ones that wakes
// every Tick. A watched thread that completed no cycle within its timeout
// and was on its CPU for at least half of it (Runaway: a loop, not a
// thread blocked or held off its CPU) is handed to its Subject's Fault.
//
// The loop neither allocates nor takes a lock a task-side goroutine could
// hold (that goroutine may be the one starved). It sleeps through the Go
// scheduler's syscall path, freeing its P.
package watchdog

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gortapi/gortapi/internal/sys"
)

// Tick bounds: a Dog checks every quarter of the shortest timeout it
// watches, within these.
const (
	MinTick = time.Millisecond
	MaxTick = 25 * time.Millisecond
)

// Tick returns a quarter of the shortest timeout, within [MinTick,
// MaxTick]; MaxTick when shortest <= 0 (nothing watched).
func Tick(shortest time.Duration) time.Duration {
	if shortest <= 0 {
		return MaxTick
	}
	return min(MaxTick, max(shortest/4, MinTick))
}

// Runaway reports whether a thread without progress for stalled ns is a
// runaway: stalled beyond timeout, and on its CPU (cpuNow-cpuAtProgress,
// in ns) for at least half of that. An unread (negative) CPU time never is.
func Runaway(timeout, stalled, cpuNow, cpuAtProgress int64) bool {
	return stalled > timeout && cpuNow >= 0 && cpuAtProgress >= 0 && cpuNow-cpuAtProgress >= stalled/2
}

// Subject is the task an Entry watches. Its methods are called on the
// Dog's thread and must neither block nor allocate.
type Subject interface {
	// Cycles is the number of cycles completed; a change is progress.
	Cycles() int64
	// Ended reports that the task ended or was faulted: no longer checked.
	Ended() bool
	// Fault acts on a runaway, stalled ns since its count was cycles.
	// It is called once per Entry unless Ended stays false.
	Fault(stalled, cycles int64)
}

// Entry is one watched thread. Timeout and Subject are set before Add;
// Idle may be set at any time.
type Entry struct {
	Timeout time.Duration
	Subject Subject
	// Idle is set while the task is paused on purpose: not a runaway.
	Idle atomic.Bool

	// Set by Add, then owned by the Dog's loop.
	lastCycles    int64
	lastProgress  int64
	cpuClock      int32 // the thread's CPU-time clock
	cpuAtProgress int64 // its reading at the last progress
}

// Config is what a Dog needs from its owner.
type Config struct {
	// Priority is the loop thread's SCHED_FIFO priority.
	Priority int
	// Go runs the loop on a locked OS thread never reused (rtapi's goLocked).
	Go func(func())
	// Started (if set) is called by Add once the loop's thread is up;
	// Exiting (if set) on the loop's thread before the loop returns.
	Started, Exiting func(tid int)
	// Report gets each fault in order, off the loop's thread; it may
	// block (faults beyond a backlog are not reported).
	Report func(Subject)
	// Logger gets a warning when the loop cannot run at Priority.
	Logger *zap.Logger
}

// Dog runs one watchdog loop while it has threads to watch. Its methods
// are safe for concurrent use.
type Dog struct {
	cfg     Config
	cpuTime func(clock int32) int64 // sys.ThreadCPUTime; replaced in tests
	// entries is replaced, never modified: the loop reads it lock-free.
	entries atomic.Pointer[[]*Entry]
	tick    atomic.Int64
	tid     atomic.Int64
	mu      sync.Mutex // serialises Add and Remove with the loop's exit
	running bool
	exited  chan struct{}
	reports chan Subject
}

// New returns a Dog with nothing to watch; the first Add starts its loop.
func New(cfg Config) *Dog {
	return &Dog{cfg: cfg, cpuTime: sys.ThreadCPUTime}
}

// Add watches e, whose thread is tid, and starts the loop if it is not
// running; it returns once the loop's thread is up.
func (d *Dog) Add(e *Entry, tid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e.lastCycles = e.Subject.Cycles()
	e.lastProgress = sys.Nanotime()
	e.cpuClock = sys.ThreadClock(tid)
	e.cpuAtProgress = d.cpuTime(e.cpuClock)
	var list []*Entry
	if p := d.entries.Load(); p != nil {
		list = append(list, *p...)
	}
	d.store(append(list, e))
	if d.running {
		return
	}
	d.running = true
	d.exited = make(chan struct{})
	d.reports = make(chan Subject, 16) // closed by the loop as it exits
	go d.report(d.reports)
	ready := make(chan struct{})
	d.cfg.Go(func() { d.loop(ready) })
	<-ready
	if d.cfg.Started != nil {
		d.cfg.Started(int(d.tid.Load()))
	}
}

// Remove stops watching e, if it is watched.
func (d *Dog) Remove(e *Entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.entries.Load()
	if p == nil || !slices.Contains(*p, e) {
		return
	}
	d.store(slices.DeleteFunc(slices.Clone(*p), func(o *Entry) bool { return o == e }))
}

// store publishes list and the tick it needs. Called with d.mu held.
func (d *Dog) store(list []*Entry) {
	var shortest time.Duration
	for _, e := range list {
		if shortest == 0 || e.Timeout < shortest {
			shortest = e.Timeout
		}
	}
	d.tick.Store(int64(Tick(shortest)))
	d.entries.Store(&list)
}

// Watched returns the entries watched now; the caller must not modify it.
func (d *Dog) Watched() []*Entry {
	if p := d.entries.Load(); p != nil {
		return *p
	}
	return nil
}

// Running reports whether the loop runs.
func (d *Dog) Running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}

// Tid is the loop's thread, once it started.
func (d *Dog) Tid() int { return int(d.tid.Load()) }

// Wait waits, at most timeout, for the last loop started to exit (within
// a tick of nothing live being left); by then its thread is off
// SCHED_FIFO and Config.Exiting has returned.
func (d *Dog) Wait(timeout time.Duration) {
	d.mu.Lock()
	exited := d.exited
	d.mu.Unlock()
	if exited == nil {
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
	}
}

// report hands faults to Config.Report, off the loop's thread.
func (d *Dog) report(reports <-chan Subject) {
	for s := range reports {
		if d.cfg.Report != nil {
			d.cfg.Report(s)
		}
	}
}

// loop checks, then sleeps to an absolute deadline, until nothing is left
// to watch.
func (d *Dog) loop(ready chan<- struct{}) {
	defer close(d.exited)
	tid := sys.Gettid()
	d.tid.Store(int64(tid))
	// Off SCHED_FIFO before Wait returns: the thread outlives the loop.
	defer func() { _ = sys.SetScheduler(0, sys.SchedOther, 0) }()
	if d.cfg.Exiting != nil {
		defer d.cfg.Exiting(tid) // before the thread ends and its tid can be reused
	}
	if err := sys.SetScheduler(0, sys.SchedFIFO, d.cfg.Priority); err != nil && d.cfg.Logger != nil {
		// Still useful below the tasks' priority on other CPUs; say so.
		d.cfg.Logger.Warn("watchdog: cannot run at SCHED_FIFO above the tasks; runaway tasks on its CPU may go unnoticed",
			zap.Int("priority", d.cfg.Priority), zap.Error(err))
	}
	close(ready)
	next := sys.Nanotime()
	for {
		next += d.tick.Load()
		if now := sys.Nanotime(); next < now {
			next = now
		}
		_ = sys.SleepUntil(next) // only fails on a bad deadline; the loop re-reads the clock
		if !d.check(sys.Nanotime()) {
			return
		}
	}
}

// check faults the runaways; false once nothing is live and the Dog stopped.
func (d *Dog) check(now int64) bool {
	seen := d.entries.Load()
	live := 0
	for _, e := range *seen {
		s := e.Subject
		if s.Ended() {
			continue
		}
		live++
		c := s.Cycles()
		cpu := d.cpuTime(e.cpuClock)
		if c != e.lastCycles || e.Idle.Load() {
			e.lastCycles, e.lastProgress, e.cpuAtProgress = c, now, cpu
			continue
		}
		if stalled := now - e.lastProgress; Runaway(int64(e.Timeout), stalled, cpu, e.cpuAtProgress) {
			s.Fault(stalled, e.lastCycles)
			select {
			case d.reports <- s:
			default: // the reporter is behind
			}
		}
	}
	if live > 0 {
		return true
	}
	return !d.leave(seen)
}

// leave stops the Dog unless its list was replaced since seen (in which
// check found nothing live), and reports whether it did.
func (d *Dog) leave(seen *[]*Entry) bool {
	if !d.mu.TryLock() {
		return false // an entry is being added right now
	}
	defer d.mu.Unlock()
	if d.entries.Load() != seen {
		return false
	}
	d.entries.Store(new([]*Entry))
	d.running = false
	close(d.reports) // the reporter ends; only the loop sends
	return true
}
