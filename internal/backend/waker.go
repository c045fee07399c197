package backend

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
)

// WakeMode is how a periodic task's thread is woken for each release.
type WakeMode uint8

// Wake modes (examples/latency-bench compares them).
const (
	// WakeAuto lets the flavor choose: nanosleep, or posix-timer on the
	// posix flavor with VanillaFIFO.
	WakeAuto WakeMode = iota
	// WakeNanosleep: an absolute sleep to each deadline (LinuxCNC,
	// cyclictest's default): a futex wait on the control word, which Stop
	// and Pause can end, or clock_nanosleep without one.
	WakeNanosleep
	// WakeTimerfd: a periodic timerfd (as Xenomai's latency tool).
	WakeTimerfd
	// WakePosixTimer: a periodic POSIX timer signalling the task's thread
	// (as cyclictest -x).
	WakePosixTimer
)

var wakeNames = [...]string{"auto", "nanosleep", "timerfd", "posix-timer"}

func (m WakeMode) String() string {
	if int(m) < len(wakeNames) {
		return wakeNames[m]
	}
	return fmt.Sprintf("wake(%d)", uint8(m))
}

// Waker puts one task thread to sleep until its next release, one
// implementation per wake mode (HACKING.md, "The wake path"). Only the
// task's thread may call it, except Interrupt and Kick.
type Waker interface {
	// Now reads the flavor's clock.
	// RT-safe.
	Now() int64
	// Arm (re)starts the schedule: a release at first, then every period.
	Arm(first, period int64) error
	// Wait sleeps until the release at deadline and returns the time it
	// woke and the releases that passed: 1, more after overruns of a
	// periodic timer. A past nanosleep deadline returns at once. It
	// returns 0 releases at once when the control word is non-zero and
	// Interrupt was called; the release at deadline is then still due.
	// RT-safe.
	Wait(deadline int64) (now int64, releases uint64, err error)
	// EndCycle reads the clock at a cycle's end (a virtual clock charges
	// the cycle's cost).
	// RT-safe.
	EndCycle() int64
	// Suspend stops a periodic timer during a pause (no overrun burst).
	Suspend() error
	// Begin blocks until the first cycle may run (a virtual clock's start).
	Begin()
	// Rejoin puts a resumed aperiodic task back on a virtual clock.
	Rejoin()
	// Sleeps counts the kernel sleeps so far (one per Wait), each a
	// voluntary context switch.
	// RT-safe.
	Sleeps() int64
	// Close releases the kernel objects. It is safe to call twice.
	Close() error
	// Interrupt makes the current or next Wait return 0 releases; the
	// caller made the control word non-zero first. Any goroutine may call
	// it, even after Close; a virtual clock ignores it.
	Interrupt()
	// Kick tells a virtual clock that Stop (stop) or Resume changed the
	// control word, from that call's goroutine after Flavor.Enter.
	Kick(stop bool)
}

// newWaker creates mode's kernel objects on the calling thread; ctl, if
// not nil, makes waits interruptible.
func newWaker(mode WakeMode, sig int, ctl *atomic.Uint32) (Waker, error) {
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
		// Older kernels give futex waits the timer slack.
		if err := sys.SetMinimalTimerSlack(); err != nil {
			return nil, err
		}
	}
	return &sleepWaker{ctl: ctl}, nil
}

// sleepWaker is the nanosleep wake mode.
type sleepWaker struct {
	ctl    *atomic.Uint32
	sleeps int64
}

func (w *sleepWaker) Now() int64                    { return sys.Nanotime() }
func (w *sleepWaker) Arm(first, period int64) error { return nil }
func (w *sleepWaker) EndCycle() int64               { return sys.Nanotime() }
func (w *sleepWaker) Suspend() error                { return nil }
func (w *sleepWaker) Begin()                        {}
func (w *sleepWaker) Rejoin()                       {}
func (w *sleepWaker) Sleeps() int64                 { return w.sleeps }
func (w *sleepWaker) Close() error                  { return nil }
func (w *sleepWaker) Kick(stop bool)                {}

func (w *sleepWaker) Wait(deadline int64) (now int64, releases uint64, err error) {
	var interrupted bool
	if w.ctl != nil {
		interrupted, err = sys.SleepUntilOr(deadline, w.ctl)
	} else {
		err = sys.SleepUntil(deadline)
	}
	w.sleeps++
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

// periodicTimer is a sys.Timerfd or sys.PosixTimer.
type periodicTimer interface {
	Arm(first, period int64) error
	Wait() (expirations uint64, err error)
	Fire() error
	Disarm() error
	Close() error
}

// timerWaker is the timerfd and posix-timer wake modes. Interrupt fires
// the timer (counted in kicks); Wait re-arms it on seeing a new count. mu
// orders a fire against Close and that re-arm.
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

func (w *timerWaker) Now() int64      { return sys.Nanotime() }
func (w *timerWaker) EndCycle() int64 { return sys.Nanotime() }
func (w *timerWaker) Suspend() error  { return w.timer.Disarm() }
func (w *timerWaker) Begin()          {}
func (w *timerWaker) Rejoin()         {}
func (w *timerWaker) Sleeps() int64   { return w.sleeps }
func (w *timerWaker) Kick(stop bool)  {}

func (w *timerWaker) Arm(first, period int64) error {
	w.period = period
	return w.timer.Arm(first, period)
}

// Wait reads the timer. After an Interrupt's fire the count means nothing:
// it re-arms with deadline next and waits on, unless the control word is
// set.
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

// rearm puts a fired timer back on its schedule.
func (w *timerWaker) rearm(first int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seenKicks = w.kicks.Load()
	return w.timer.Arm(first, w.period)
}

// Interrupt fires the timer; it locks only briefly, against Close.
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
