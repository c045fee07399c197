package sys

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TimerSignal is the default real-time signal gortapi's POSIX timers
// deliver to their task thread (SIGRTMIN+6 in glibc's numbering);
// NewPosixTimer takes another. The signal is blocked on that thread and
// collected with rt_sigtimedwait, so the timer's instances never reach a
// handler. Instances of the same signal that were not the timer's (kill(2)
// to the process, which rt_sigtimedwait dequeues too) are handed on to the
// process's main thread, where the program's handler (signal.Notify) gets
// them.
const TimerSignal = unix.Signal(40)

// Signal numbers a POSIX timer may use: the real-time signals glibc leaves
// to applications (it keeps 32 and 33 for itself).
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

// PosixTimer is a periodic POSIX timer (timer_create on CLOCK_MONOTONIC)
// that signals one thread with TimerSignal: the wake-up scheme of seed
// 000 (Arvid Brodin), aimed at the task's own thread with
// SIGEV_THREAD_ID. It must be created, waited on and closed on the same
// locked OS thread.
type PosixTimer struct {
	id   int32
	sig  unix.Signal
	pid  int
	set  sigset
	info siginfo
	open bool
	// noWait is rt_sigtimedwait's zero timeout (dropPending), kept here
	// so that it does not escape from each call.
	noWait unix.Timespec
}

// NewPosixTimer creates a timer that will signal the calling thread with
// sig (in [TimerSignalMin, TimerSignalMax]), and blocks sig on that thread
// so that the signal stays pending until Wait collects it. The caller must
// be locked to its OS thread.
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

// Arm starts the timer: first expiry at the absolute CLOCK_MONOTONIC time
// first, then every period nanoseconds. The first Wait after it is for
// first: a signal of the previous schedule still queued is dropped
// (kernels before 6.13 deliver it after a re-arm; later ones drop it
// themselves). Only the timer's thread may call it.
func (t *PosixTimer) Arm(first, period int64) error {
	if err := t.Disarm(); err != nil {
		return err
	}
	t.dropPending()
	return t.settime(unix.TIMER_ABSTIME, unix.ItimerSpec{Value: Timespec(first), Interval: Timespec(period)})
}

// Disarm stops the timer without deleting it.
func (t *PosixTimer) Disarm() error { return t.settime(0, unix.ItimerSpec{}) }

// settime is timer_settime(2) on t; flags is 0 or TIMER_ABSTIME.
func (t *PosixTimer) settime(flags uintptr, spec unix.ItimerSpec) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_TIMER_SETTIME, uintptr(t.id), flags,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 {
		return os.NewSyscallError("timer_settime", errno)
	}
	return nil
}

// Fire makes the timer expire once, now, and stops its period: a Wait in
// progress, or the next one, returns. The owner re-arms it with Arm. Any
// goroutine may call Fire, as long as it is not concurrent with Close.
func (t *PosixTimer) Fire() error {
	return t.settime(0, unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}})
}

// Wait blocks until the timer's signal arrives and returns the number of
// expirations it stands for: 1 normally, 1 + si_overrun when periods were
// missed while the thread was busy.
//
// rt_sigtimedwait also dequeues instances of the signal sent to the whole
// process (kill(2)), which belong to the program: Wait hands each on to
// the main thread (rt_tgsigqueueinfo, same siginfo; a kill's SI_USER code
// becomes SI_QUEUE, the only change the kernel allows) and waits on.
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

// maxDropped bounds dropPending's loop: a flood of kill(2)s of the timer
// signal must not hold the task thread.
const maxDropped = 64

// dropPending takes the instances of the timer's signal queued now, without
// waiting: the timer's (of a schedule that is over: the timer is disarmed)
// are dropped, the others handed on as Wait does.
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

//go:noinline
func errSigwait(errno unix.Errno) error { return os.NewSyscallError("rt_sigtimedwait", errno) }

// handOn queues the signal Wait just took, which was not this timer's, to
// the process's main thread. gortapi's task threads never run there, so the
// main thread does not block it and the Go runtime's handler delivers it
// to the program.
func (t *PosixTimer) handOn() {
	if t.info.code >= 0 || t.info.code == siTkill {
		t.info.code = siQueue
	}
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(t.pid), uintptr(t.pid), uintptr(t.sig),
		uintptr(unsafe.Pointer(&t.info)), 0, 0)
}

// Close deletes the timer. The signal stays blocked on the thread; the
// runtime destroys a thread whose goroutine exits while locked, which is
// what gortapi's task threads do.
func (t *PosixTimer) Close() error {
	if !t.open {
		return nil
	}
	t.open = false
	_, _, errno := unix.RawSyscall(unix.SYS_TIMER_DELETE, uintptr(t.id), 0, 0)
	if errno != 0 {
		return os.NewSyscallError("timer_delete", errno)
	}
	return nil
}

// blockSignals adds set to the calling thread's signal mask.
func blockSignals(set sigset) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK,
		uintptr(unsafe.Pointer(&set)), 0, unsafe.Sizeof(set), 0, 0)
	if errno != 0 {
		return os.NewSyscallError("rt_sigprocmask", errno)
	}
	return nil
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

// Timerfd is a periodic kernel timer read through a file descriptor
// (timerfd_create on CLOCK_MONOTONIC): the task blocks in read(2) and the
// value read is the number of expirations since the last read.
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

// Arm starts the timer: first expiry at the absolute CLOCK_MONOTONIC time
// first, then every period nanoseconds.
func (t *Timerfd) Arm(first, period int64) error {
	return t.settime(unix.TFD_TIMER_ABSTIME, unix.ItimerSpec{Value: Timespec(first), Interval: Timespec(period)})
}

// Fire makes the timer expire once, now, and stops its period: a Wait in
// progress, or the next one, returns. The owner re-arms it with Arm. Any
// goroutine may call Fire, as long as it is not concurrent with Close.
func (t *Timerfd) Fire() error { return t.settime(0, unix.ItimerSpec{Value: unix.Timespec{Nsec: 1}}) }

// Disarm stops the timer.
func (t *Timerfd) Disarm() error { return t.settime(0, unix.ItimerSpec{}) }

// settime is timerfd_settime(2) on t; flags is 0 or TFD_TIMER_ABSTIME.
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
