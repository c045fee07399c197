package backend

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// WakeMode is how a periodic task's thread is woken for each release.
type WakeMode uint8

// Wake modes. They differ in what a wake-up costs and in how late it comes
// on a kernel that is not real-time; examples/latency-bench measures them
// side by side.
const (
	// WakeAuto lets the flavor choose: nanosleep, or posix-timer on the
	// posix flavor with VanillaFIFO.
	WakeAuto WakeMode = iota
	// WakeNanosleep: oneshot, an absolute sleep to each deadline
	// (LinuxCNC, cyclictest's default). A task's sleep is a futex wait
	// on its control word with the absolute CLOCK_MONOTONIC deadline
	// (the hrtimer clock_nanosleep arms, timer slack 1 ns), so that Stop
	// and Pause can end it without a race; a Waker without a control word
	// uses clock_nanosleep itself.
	WakeNanosleep
	// WakeTimerfd: a periodic kernel timer read through a timerfd
	// (blocking read; a count above 1 means missed periods). Xenomai's
	// latency tool works this way.
	WakeTimerfd
	// WakePosixTimer: a periodic POSIX timer signalling the task's own
	// thread, collected with rt_sigtimedwait (cyclictest -x does the same).
	WakePosixTimer
)

var wakeNames = [...]string{"auto", "nanosleep", "timerfd", "posix-timer"}

func (m WakeMode) String() string {
	if int(m) < len(wakeNames) {
		return wakeNames[m]
	}
	return fmt.Sprintf("wake(%d)", uint8(m))
}

// VirtualThread is what a flavor with its own clock (the sim flavor)
// provides for one task thread. Real flavors leave it nil, so their
// per-cycle path makes no interface call.
type VirtualThread interface {
	Now() int64
	Arm(first, period int64) error
	Wait(deadline int64) (now int64, expirations uint64, err error)
	// Suspend tells the flavor the task is paused (not runnable) until
	// the next Arm.
	Suspend()
	Close() error
	// Begin blocks until the task's first cycle is due on the virtual
	// clock, so that it runs in the deterministic schedule rather than
	// as soon as Start returns.
	Begin()
	// EndCycle is called as the body ends each cycle, before the
	// overrun check; it returns the time the cycle ended (a virtual
	// clock charges the cycle's execution cost here).
	EndCycle() int64
	// Kick says that Stop (stop true) or Resume changed the task's
	// control word, so that a thread the flavor holds asleep can act on
	// it in virtual time. Unlike the others it is called from any
	// goroutine.
	Kick(stop bool)
}

// Waker puts one task thread to sleep until its next release. It belongs
// to the task's locked OS thread: only that thread may call it, except
// Interrupt and Kick.
type Waker struct {
	mode   WakeMode
	raw    bool
	period int64
	tfd    *sys.Timerfd
	pt     *sys.PosixTimer
	virt   VirtualThread
	// ctl is the task's control word (ThreadSpec.Control): a wait ends
	// early once it is non-zero and Interrupt was called. nil: waits are
	// not interruptible.
	ctl *atomic.Uint32

	// Interrupt fires a periodic timer (kicks counts those fires) and
	// the task thread puts it back on its schedule when it sees a new
	// count. mu orders a fire against Close and against that re-arm.
	mu        sync.Mutex
	closed    bool
	kicks     atomic.Uint32
	seenKicks uint32 // the task thread's

	sleeps int64 // kernel sleeps made so far (Sleeps); the task thread's
}

// NewVirtualWaker returns a Waker driven by a VirtualThread.
func NewVirtualWaker(v VirtualThread) *Waker { return &Waker{virt: v} }

// newWaker creates the kernel objects for mode on the calling thread; a
// POSIX timer signals sig. ctl, when not nil, is the control word that
// makes waits interruptible (see Interrupt).
func newWaker(mode WakeMode, raw bool, sig int, ctl *atomic.Uint32) (*Waker, error) {
	w := &Waker{mode: mode, raw: raw, ctl: ctl}
	var err error
	switch mode {
	case WakeTimerfd:
		w.tfd, err = sys.NewTimerfd()
	case WakePosixTimer:
		w.pt, err = sys.NewPosixTimer(sig)
	default:
		if ctl != nil {
			// The interruptible sleep is a futex wait, which older
			// kernels give the thread's timer slack (50 µs by default)
			// where clock_nanosleep has none for real-time threads.
			err = sys.SetMinimalTimerSlack()
		}
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Mode is the wake mode in use.
func (w *Waker) Mode() WakeMode { return w.mode }

// Now reads the flavor's clock.
//
// RT-safe.
func (w *Waker) Now() int64 {
	if w.virt != nil {
		return w.virt.Now()
	}
	return sys.Nanotime()
}

// Arm (re)starts the release schedule: first release at first, then every
// period. For nanosleep it only records the period; the periodic kernel
// timers are programmed here. Called at start and after a pause.
func (w *Waker) Arm(first, period int64) error {
	w.period = period
	switch {
	case w.virt != nil:
		return w.virt.Arm(first, period)
	case w.tfd != nil:
		return w.tfd.Arm(first, period)
	case w.pt != nil:
		return w.pt.Arm(first, period)
	}
	return nil
}

// Wait sleeps until the release at deadline and returns the time it woke
// and the number of releases that passed: 1 normally; more when a periodic
// kernel timer expired several times while the task was busy (the extra
// ones are overruns). In nanosleep mode a deadline already past returns at
// once with one release.
//
// It returns 0 releases, at once, when the control word is non-zero and
// Interrupt was called (before the wait or during it): the caller looks at
// the word. A periodic timer is then back on its schedule, the release at
// deadline not yet consumed.
//
// RT-safe: no allocation, no lock (but after an Interrupt); on the Linux
// backends no interface call.
func (w *Waker) Wait(deadline int64) (now int64, releases uint64, err error) {
	switch {
	case w.virt != nil:
		return w.virt.Wait(deadline)
	case w.tfd != nil, w.pt != nil:
		releases, err = w.waitTimer(deadline)
		w.sleeps++
	default:
		var interrupted bool
		switch {
		case w.raw:
			var n int64
			n, interrupted, err = sleepRaw(deadline, w.ctl)
			w.sleeps += n
		case w.ctl != nil:
			interrupted, err = sys.SleepUntilOr(deadline, w.ctl, false)
			w.sleeps++
		default:
			err = sys.SleepUntil(deadline)
			w.sleeps++
		}
		if !interrupted {
			releases = 1
		}
	}
	return sys.Nanotime(), releases, err
}

// waitTimer reads a periodic timer. When Interrupt fired it in the
// meantime, the expirations read mean nothing: the timer is re-armed on
// its schedule, with the release at deadline next (at once, with the
// releases missed since, if deadline is past), and the wait goes on unless
// the control word asks the caller to look.
func (w *Waker) waitTimer(deadline int64) (uint64, error) {
	for {
		var n uint64
		var err error
		if w.tfd != nil {
			n, err = w.tfd.Wait()
		} else {
			n, err = w.pt.Wait()
		}
		if err != nil || w.kicks.Load() == w.seenKicks {
			return n, err
		}
		if err := w.rearm(deadline); err != nil {
			return 0, err
		}
		if w.ctl.Load() != 0 {
			return 0, nil
		}
	}
}

// rearm puts a fired timer back on its schedule. Off the common path: it
// runs only after an Interrupt.
func (w *Waker) rearm(first int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seenKicks = w.kicks.Load()
	if w.tfd != nil {
		return w.tfd.Arm(first, w.period)
	}
	return w.pt.Arm(first, w.period)
}

// Interrupt makes the task's Wait in progress, or its next one, return
// with 0 releases; the caller has made the control word non-zero first.
// In nanosleep mode it wakes the futex sleep; a periodic timer is fired at
// once (Wait puts it back on its schedule). Any goroutine may call it, at
// any time, also after Close; a virtual clock ignores it (it is told
// through Kick). It never blocks for long: a short lock against Close.
func (w *Waker) Interrupt() {
	switch {
	case w.virt != nil, w.ctl == nil:
		return
	case w.tfd == nil && w.pt == nil:
		sys.WakeSleeper(w.ctl)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.kicks.Add(1)
	if w.tfd != nil {
		_ = w.tfd.Fire()
	} else {
		_ = w.pt.Fire()
	}
}

// SetRawSleep switches the nanosleep wait between a raw sleep, which keeps
// the Go scheduler's P (ThreadSpec.RawSleep), and an ordinary one, which
// lets the runtime hand the P to other goroutines. The other wake modes
// ignore it. Only the task's thread may call it; it takes effect at the
// next Wait.
//
// RT-safe.
func (w *Waker) SetRawSleep(raw bool) { w.raw = raw }

// Sleeps is the number of times the Waits so far put the thread to sleep
// in the kernel: one per Wait, or one per RawSleepChunk of a raw sleep.
// Each is one voluntary context switch of the thread (getrusage's
// ru_nvcsw), which is how the interference counters tell a sleep from a
// block. Only the task's thread may call it.
//
// RT-safe.
func (w *Waker) Sleeps() int64 { return w.sleeps }

// Begin blocks until the task's first cycle may run: at once on the
// Linux backends, when the simulation reaches the task's start on a
// virtual clock.
func (w *Waker) Begin() {
	if w.virt != nil {
		w.virt.Begin()
	}
}

// EndCycle reads the clock as the body ends a cycle: the flavor's Now on
// the Linux backends; on a virtual clock, the cycle's start plus its
// declared (or measured) execution cost.
//
// RT-safe: no allocation, no lock; on the Linux backends no interface call.
func (w *Waker) EndCycle() int64 {
	if w.virt != nil {
		return w.virt.EndCycle()
	}
	return sys.Nanotime()
}

// Kick tells a virtual clock that Stop (stop true) or Resume changed the
// task's control word; the Linux backends ignore it. Unlike the other
// methods it may be called from any goroutine.
func (w *Waker) Kick(stop bool) {
	if w.virt != nil {
		w.virt.Kick(stop)
	}
}

// Rejoin takes a resumed task that is not periodic back into a virtual
// clock's schedule, waiting for its turn there; a periodic task's next
// Wait does that. The Linux backends do nothing.
func (w *Waker) Rejoin() {
	if w.virt != nil {
		_, _, _ = w.virt.Wait(w.virt.Now())
	}
}

// Suspend stops the periodic kernel timers while the task is paused, so
// a pause does not come back as a burst of overruns.
func (w *Waker) Suspend() error {
	switch {
	case w.virt != nil:
		w.virt.Suspend()
	case w.tfd != nil:
		return w.tfd.Disarm()
	case w.pt != nil:
		return w.pt.Disarm()
	}
	return nil
}

// Close releases the kernel objects. It is safe to call twice.
func (w *Waker) Close() error {
	if w.virt != nil {
		return w.virt.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	switch {
	case w.tfd != nil:
		return w.tfd.Close()
	case w.pt != nil:
		return w.pt.Close()
	}
	return nil
}

// RawSleepChunk bounds one raw sleep. A raw sleeper keeps its P, and a
// stop-the-world of the whole process waits for it until the sleep ends;
// longer waits are cut into chunks, and the start of each is a point where
// the Go scheduler may stop the task.
const RawSleepChunk = 2 * time.Millisecond

// sleepRaw sleeps until deadline in raw sleeps of at most RawSleepChunk.
// It returns how many sleeps it made (a deadline already past makes none).
// With a control word it ends early, interrupted, when the word is
// non-zero and woken (sys.SleepUntilOr); ctl may be nil.
//
// A signal that interrupts a sleep is, on a task thread, almost always the
// Go runtime's request that a goroutine which kept its P for 10 ms yield
// (sysmon's forced preemption, SIGURG). The runtime would honour it at the
// first function call after the wake-up, a round trip through another
// thread that makes the wake-up late; sleepRaw honours it at once instead
// (runtime.Gosched), while the task has time to spare, and sleeps on.
//
// RT-safe: no allocation.
func sleepRaw(deadline int64, ctl *atomic.Uint32) (sleeps int64, interrupted bool, err error) {
	for {
		now := sys.Nanotime()
		if now >= deadline {
			return sleeps, false, nil
		}
		step := min(deadline, now+int64(RawSleepChunk))
		sleeps++
		woken, signalled, err := sys.SleepRawOnceOr(step, ctl)
		switch {
		case err != nil:
			return sleeps, false, err
		case woken:
			return sleeps, true, nil
		case signalled:
			runtime.Gosched()
		}
		// The deadline passed, or a wake-up whose request was withdrawn
		// before this thread looked (Pause then Resume): the clock at the
		// top of the loop tells which, never the step alone.
	}
}
