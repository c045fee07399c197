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

// Waker puts one task thread to sleep until its next release. There is
// one implementation per wake mode: nanosleep (a futex or raw sleep to
// each deadline), timerfd, POSIX timer here, and the sim's virtual thread
// (rtapi/sim). It belongs
// to the task's locked OS thread: only that thread may call it, except
// Interrupt and Kick.
type Waker interface {
	// Now reads the flavor's clock.
	// RT-safe.
	Now() int64
	// Arm (re)starts the release schedule: first release at first, then
	// every period. Called at start, after a pause and on Resync.
	Arm(first, period int64) error
	// Wait sleeps until the release at deadline and returns the time it
	// woke and the number of releases that passed: 1 normally; more
	// when a periodic timer expired several times while the task was
	// busy (the extra ones are overruns). A nanosleep deadline already
	// past returns at once with one release. It returns 0 releases, at
	// once, when the control word is non-zero and Interrupt was called
	// (before the wait or during it); a periodic timer is then back on
	// its schedule, the release at deadline not yet consumed.
	// RT-safe.
	Wait(deadline int64) (now int64, releases uint64, err error)
	// EndCycle reads the clock as the body ends a cycle; a virtual
	// clock charges the cycle's execution cost here.
	// RT-safe.
	EndCycle() int64
	// Suspend stops a periodic timer while the task is paused, so that
	// a pause does not come back as a burst of overruns.
	Suspend() error
	// Begin blocks until the task's first cycle may run: at once, or
	// when a virtual clock reaches the task's start.
	Begin()
	// Rejoin takes a resumed task that is not periodic back into a
	// virtual clock's schedule; the others do nothing.
	Rejoin()
	// SetRawSleep switches a nanosleep wait between a raw sleep, which
	// keeps the Go scheduler's P, and an ordinary one; the other modes
	// ignore it. It takes effect at the next Wait.
	// RT-safe.
	SetRawSleep(raw bool)
	// Sleeps is the number of times the Waits so far put the thread to
	// sleep in the kernel: one per Wait, or one per RawSleepChunk of a
	// raw sleep, each one voluntary context switch (getrusage's
	// ru_nvcsw).
	// RT-safe.
	Sleeps() int64
	// Close releases the kernel objects. It is safe to call twice.
	Close() error
	// Interrupt makes the Wait in progress, or the next one, return with
	// 0 releases; the caller has made the control word non-zero first.
	// Any goroutine may call it, at any time, also after Close; a
	// virtual clock ignores it (it is told through Kick).
	Interrupt()
	// Kick tells a virtual clock that Stop (stop true) or Resume changed
	// the task's control word; the others ignore it. It is called by the
	// goroutine making that call, once Flavor.Enter admitted it.
	Kick(stop bool)
}

// newWaker creates the kernel objects for mode on the calling thread; a
// POSIX timer signals sig. ctl, when not nil, is the control word that
// makes waits interruptible (see Interrupt).
func newWaker(mode WakeMode, raw bool, sig int, ctl *atomic.Uint32) (Waker, error) {
	switch mode {
	case WakeTimerfd:
		tfd, err := sys.NewTimerfd()
		if err != nil {
			return nil, err
		}
		return &timerWaker{timer: tfd, ctl: ctl}, nil
	case WakePosixTimer:
		pt, err := sys.NewPosixTimer(sig)
		if err != nil {
			return nil, err
		}
		return &timerWaker{timer: pt, ctl: ctl}, nil
	}
	if ctl != nil {
		// The interruptible sleep is a futex wait, which older kernels
		// give the thread's timer slack (50 µs by default) where
		// clock_nanosleep has none for real-time threads.
		if err := sys.SetMinimalTimerSlack(); err != nil {
			return nil, err
		}
	}
	return &sleepWaker{raw: raw, ctl: ctl}, nil
}

// sleepWaker is the nanosleep wake mode: an absolute sleep to each
// deadline. With a control word the sleep is a futex wait on it that
// Interrupt can end; raw, the sleep keeps the P (sleepRaw).
type sleepWaker struct {
	raw    bool
	ctl    *atomic.Uint32
	sleeps int64
}

func (w *sleepWaker) Now() int64                    { return sys.Nanotime() }
func (w *sleepWaker) Arm(first, period int64) error { return nil }
func (w *sleepWaker) EndCycle() int64               { return sys.Nanotime() }
func (w *sleepWaker) Suspend() error                { return nil }
func (w *sleepWaker) Begin()                        {}
func (w *sleepWaker) Rejoin()                       {}
func (w *sleepWaker) SetRawSleep(raw bool)          { w.raw = raw }
func (w *sleepWaker) Sleeps() int64                 { return w.sleeps }
func (w *sleepWaker) Close() error                  { return nil }
func (w *sleepWaker) Kick(stop bool)                {}

func (w *sleepWaker) Wait(deadline int64) (now int64, releases uint64, err error) {
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
	return sys.Nanotime(), releases, err
}

func (w *sleepWaker) Interrupt() {
	if w.ctl != nil {
		sys.WakeSleeper(w.ctl)
	}
}

// periodicTimer is a kernel timer that expires every period: a timerfd
// or a POSIX timer aimed at the task's thread.
type periodicTimer interface {
	Arm(first, period int64) error
	Wait() (expirations uint64, err error)
	Fire() error
	Disarm() error
	Close() error
}

// timerWaker is the timerfd and posix-timer wake modes: a periodic kernel
// timer the thread reads. Interrupt fires it (kicks counts those fires)
// and the task thread puts it back on its schedule when it sees a new
// count; mu orders a fire against Close and against that re-arm.
type timerWaker struct {
	timer  periodicTimer
	ctl    *atomic.Uint32
	period int64
	sleeps int64

	mu        sync.Mutex
	closed    bool
	kicks     atomic.Uint32
	seenKicks uint32 // the task thread's
}

func (w *timerWaker) Now() int64           { return sys.Nanotime() }
func (w *timerWaker) EndCycle() int64      { return sys.Nanotime() }
func (w *timerWaker) Suspend() error       { return w.timer.Disarm() }
func (w *timerWaker) Begin()               {}
func (w *timerWaker) Rejoin()              {}
func (w *timerWaker) SetRawSleep(raw bool) {}
func (w *timerWaker) Sleeps() int64        { return w.sleeps }
func (w *timerWaker) Kick(stop bool)       {}

func (w *timerWaker) Arm(first, period int64) error {
	w.period = period
	return w.timer.Arm(first, period)
}

// Wait reads the timer. When Interrupt fired it in the meantime, the
// expirations read mean nothing: the timer is re-armed on its schedule,
// with the release at deadline next (at once, with the releases missed
// since, if deadline is past), and the wait goes on unless the control
// word asks the caller to look.
func (w *timerWaker) Wait(deadline int64) (now int64, releases uint64, err error) {
	w.sleeps++
	for {
		releases, err = w.timer.Wait()
		if err != nil || w.kicks.Load() == w.seenKicks {
			return sys.Nanotime(), releases, err
		}
		if err := w.rearm(deadline); err != nil {
			return sys.Nanotime(), 0, err
		}
		if w.ctl.Load() != 0 {
			return sys.Nanotime(), 0, nil
		}
	}
}

// rearm puts a fired timer back on its schedule. Off the common path: it
// runs only after an Interrupt.
func (w *timerWaker) rearm(first int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seenKicks = w.kicks.Load()
	return w.timer.Arm(first, w.period)
}

// Interrupt fires the timer at once; Wait puts it back on its schedule.
// It never blocks for long: a short lock against Close.
func (w *timerWaker) Interrupt() {
	if w.ctl == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.kicks.Add(1)
	_ = w.timer.Fire()
}

func (w *timerWaker) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.timer.Close()
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
// It allocates nothing.
//
// RT-safe.
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
