package sys

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TimerSignal is the default signal of a PosixTimer (SIGRTMIN+6 in glibc's
// numbering). It is blocked on the task thread and collected by Wait;
// other instances of it (kill(2)) go on to the main thread's handler.
const TimerSignal = unix.Signal(40)

// Signal numbers a POSIX timer may use (glibc keeps 32 and 33).
const (
	TimerSignalMin = unix.Signal(34)
	TimerSignalMax = unix.Signal(64)
)

// siginfo codes (si_code) the timer's Wait tells apart.
const (
	siTimer = -2 // SI_TIMER: a POSIX timer expired
	siQueue = -1 // SI_QUEUE: sigqueue(3)
	siTkill = -6 // SI_TKILL: tgkill(2)
)

func sigsetOf(sig unix.Signal) sigset { return 1 << (uint(sig) - 1) }

// PosixTimer is a periodic CLOCK_MONOTONIC POSIX timer that signals one
// thread (SIGEV_THREAD_ID; Arvid Brodin's scheme). It must be created,
// waited on and closed on the same locked OS thread.
type PosixTimer struct {
	id   int32
	sig  unix.Signal
	pid  int
	set  sigset
	info siginfo
	open bool
	// noWait is dropPending's zero timeout, here so it does not escape.
	noWait unix.Timespec
}

// NewPosixTimer creates a timer signalling the calling thread, which must
// be locked to it, with sig in [TimerSignalMin, TimerSignalMax], and
// blocks sig there until Wait collects it.
func NewPosixTimer(signo int) (*PosixTimer, error) {
	sig := unix.Signal(signo)
	if sig < TimerSignalMin || sig > TimerSignalMax {
		return nil, os.NewSyscallError("timer_create", unix.EINVAL)
	}
	t := &PosixTimer{sig: sig, pid: unix.Getpid(), set: sigsetOf(sig)}
	if err := blockSignals(t.set); err != nil {
		return nil, err
	}
	ev := sigevent{signo: int32(sig), notify: sigevThreadID, tid: int32(unix.Gettid())}
	_, _, errno := unix.RawSyscall(unix.SYS_TIMER_CREATE, unix.CLOCK_MONOTONIC,
		uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&t.id)))
	if errno != 0 {
		return nil, os.NewSyscallError("timer_create", errno)
	}
	t.open = true
	return t, nil
}

// Arm starts the timer: first expiry at the absolute time first, then
// every period nanoseconds. A queued signal of the previous schedule is
// dropped (kernels before 6.13 keep it). Only the timer's thread may call it.
func (t *PosixTimer) Arm(first, period int64) error {
	if err := t.Disarm(); err != nil {
		return err
	}
	t.dropPending()
	return t.settime(unix.TIMER_ABSTIME, unix.ItimerSpec{Value: Timespec(first), Interval: Timespec(period)})
}

// Disarm stops the timer without deleting it.
func (t *PosixTimer) Disarm() error { return t.settime(0, unix.ItimerSpec{}) }

func (t *PosixTimer) settime(flags uintptr, spec unix.ItimerSpec) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMER_SETTIME, uintptr(t.id), flags,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	return syscallErr("timer_settime", errno)
}

// Fire makes the timer expire once, now, and stops its period; the owner
// re-arms it. Any goroutine may call it, but not concurrently with Close.
func (t *PosixTimer) Fire() error {
	return t.settime(0, unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}})
}

// Wait blocks until the timer's signal arrives and returns its expirations:
// 1, plus si_overrun for missed periods. Other instances of the signal are
// handed on to the main thread (a kill's SI_USER becomes SI_QUEUE).
// RT-safe.
func (t *PosixTimer) Wait() (uint64, error) {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&t.set)),
			uintptr(unsafe.Pointer(&t.info)), 0, unsafe.Sizeof(t.set), 0, 0)
		switch errno {
		case 0:
			if t.info.code != siTimer || t.info.timerID != t.id {
				t.handOn()
				continue
			}
			return 1 + uint64(t.info.overrun), nil
		case unix.EINTR:
			continue
		default:
			return 0, errSigwait(errno)
		}
	}
}

// maxDropped bounds dropPending, against a flood of kill(2)s.
const maxDropped = 64

// dropPending takes the queued signals without waiting: the (disarmed)
// timer's are dropped, the others handed on.
func (t *PosixTimer) dropPending() {
	for range maxDropped {
		_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGTIMEDWAIT, uintptr(unsafe.Pointer(&t.set)),
			uintptr(unsafe.Pointer(&t.info)), uintptr(unsafe.Pointer(&t.noWait)), unsafe.Sizeof(t.set), 0, 0)
		switch {
		case errno == unix.EINTR:
		case errno != 0: // EAGAIN: nothing left
			return
		case t.info.code != siTimer || t.info.timerID != t.id:
			t.handOn()
		}
	}
}

// syscallErr is os.NewSyscallError for a raw call's errno: nil for 0.
func syscallErr(name string, errno unix.Errno) error {
	if errno == 0 {
		return nil
	}
	return os.NewSyscallError(name, errno)
}

//go:noinline
func errSigwait(errno unix.Errno) error { return os.NewSyscallError("rt_sigtimedwait", errno) }

// handOn queues the signal just taken, not this timer's, to the main
// thread, where no task runs and Go's handler delivers it.
func (t *PosixTimer) handOn() {
	if t.info.code >= 0 || t.info.code == siTkill {
		t.info.code = siQueue
	}
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(t.pid), uintptr(t.pid), uintptr(t.sig),
		uintptr(unsafe.Pointer(&t.info)), 0, 0)
}

// Close deletes the timer; the signal stays blocked on the thread.
func (t *PosixTimer) Close() error {
	if !t.open {
		return nil
	}
	t.open = false
	_, _, errno := unix.RawSyscall(unix.SYS_TIMER_DELETE, uintptr(t.id), 0, 0)
	return syscallErr("timer_delete", errno)
}

// blockSignals adds set to the calling thread's signal mask.
func blockSignals(set sigset) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK,
		uintptr(unsafe.Pointer(&set)), 0, unsafe.Sizeof(set), 0, 0)
	return syscallErr("rt_sigprocmask", errno)
}

// SignalBlocked reports whether sig is blocked on the calling thread.
func SignalBlocked(sig unix.Signal) (bool, error) {
	var old sigset
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, 0,
		uintptr(unsafe.Pointer(&old)), unsafe.Sizeof(old), 0, 0)
	if errno != 0 {
		return false, os.NewSyscallError("rt_sigprocmask", errno)
	}
	return old&sigsetOf(sig) != 0, nil
}

// Timerfd is a periodic CLOCK_MONOTONIC timer read through a descriptor.
type Timerfd struct {
	fd  int
	buf [8]byte
}

// NewTimerfd creates a disarmed timerfd.
func NewTimerfd() (*Timerfd, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	return &Timerfd{fd: fd}, nil
}

// Arm starts the timer: first expiry at the absolute time first, then
// every period nanoseconds.
func (t *Timerfd) Arm(first, period int64) error {
	return t.settime(unix.TFD_TIMER_ABSTIME, unix.ItimerSpec{Value: Timespec(first), Interval: Timespec(period)})
}

// Fire makes the timer expire once, now, as PosixTimer.Fire does.
func (t *Timerfd) Fire() error { return t.settime(0, unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}) }

// Disarm stops the timer.
func (t *Timerfd) Disarm() error { return t.settime(0, unix.ItimerSpec{}) }

func (t *Timerfd) settime(flags int, spec unix.ItimerSpec) error {
	if err := unix.TimerfdSettime(t.fd, flags, &spec, nil); err != nil {
		return os.NewSyscallError("timerfd_settime", err)
	}
	return nil
}

// Wait blocks until the timer expires and returns the number of
// expirations (more than 1 when periods were missed).
// RT-safe.
func (t *Timerfd) Wait() (uint64, error) {
	for {
		_, _, errno := unix.Syscall(unix.SYS_READ, uintptr(t.fd), uintptr(unsafe.Pointer(&t.buf[0])), 8)
		switch errno {
		case 0:
			return *(*uint64)(unsafe.Pointer(&t.buf[0])), nil
		case unix.EINTR:
			continue
		default:
			return 0, errTimerfdRead(errno)
		}
	}
}

//go:noinline
func errTimerfdRead(errno unix.Errno) error { return os.NewSyscallError("read timerfd", errno) }

// Close releases the descriptor. It is safe to call twice.
func (t *Timerfd) Close() error {
	if t.fd < 0 {
		return nil
	}
	fd := t.fd
	t.fd = -1
	if err := unix.Close(fd); err != nil && !errors.Is(err, unix.EBADF) {
		return os.NewSyscallError("close", err)
	}
	return nil
}
