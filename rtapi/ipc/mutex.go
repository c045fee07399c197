package ipc

import (
	"os"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
)

// selfPID is the owner tag a Mutex stores (Go never forks without exec).
var selfPID = uint32(os.Getpid())

const (
	mutexPIDMask     = 1<<30 - 1 // pid_max is at most 2^22
	mutexWaiters     = 1 << 30
	ownerPollNs      = 20_000_000 // re-check a blocked owner's liveness every 20 ms
	lockSpinTries    = 64
	contendedSleepNs = 50_000 // Lock's sleep after lockSpinTries lost CASes in a row
	casTries         = 64     // bounds Semaphore's CAS loops
)

// alive reports whether the process owning a lock word exists. A zero
// owner is no process, so a zeroed word never reads as held forever.
func alive(pid uint32) bool {
	return int32(pid) > 0 && (pid == selfPID || sys.ProcessAlive(int(pid)))
}

// ownerAlive is alive for the blocking path; a test replaces it.
var ownerAlive = alive

// Mutex is a futex lock in shared memory, between processes and between
// goroutines of one process (rtapi_mutex_get/try/give, sleeping instead of
// spinning). Its zero value is unlocked; it is 8 bytes, 4-byte aligned and
// pointer-free.
//
// The lock word holds the owner's pid. A locker that finds the owner gone,
// or a word naming no process (as a peer may write), takes the lock over and
// gets ErrOwnerDead. A peer that writes a live pid holds it. Within a process
// it is like sync.Mutex: not reentrant, and any goroutine may unlock it.
type Mutex struct {
	state uint32
	_     uint32
}

// TryLock takes the lock if it is free and returns nil; ErrBusy if a live
// process holds it; ErrOwnerDead if it took it over from a dead one. It
// never blocks; when the lock is held it makes one kill(pid, 0) call.
// RT-safe.
func (m *Mutex) TryLock() error {
	if atomic.CompareAndSwapUint32(&m.state, 0, selfPID) {
		return nil
	}
	v := atomic.LoadUint32(&m.state)
	if v != 0 && !alive(v&mutexPIDMask) && atomic.CompareAndSwapUint32(&m.state, v, selfPID|v&mutexWaiters) {
		return ErrOwnerDead
	}
	return ErrBusy
}

// Lock takes the lock, waiting as long as needed: nil, ErrOwnerDead, or a
// system call error with the lock not held. It blocks; it does not allocate.
func (m *Mutex) Lock() error { return m.lock(0) }

// LockDeadline is Lock with an absolute CLOCK_MONOTONIC deadline in
// nanoseconds (rtapi.Now; never the sim flavor's virtual clock);
// ErrTimeout when it passes.
func (m *Mutex) LockDeadline(deadlineNs int64) error {
	if deadlineNs <= 0 {
		deadlineNs = 1 // 0 means "no deadline" inside lock
	}
	return m.lock(deadlineNs)
}

func (m *Mutex) lock(deadline int64) error {
	for range lockSpinTries {
		if atomic.LoadUint32(&m.state) == 0 && atomic.CompareAndSwapUint32(&m.state, 0, selfPID) {
			return nil
		}
	}
	// Every pass checks the deadline, and lockSpinTries lost CASes in a row
	// sleep: a peer rewriting the word must neither hold us past the
	// deadline nor make us burn a CPU.
	for failed := 0; ; failed++ {
		if deadline != 0 && sys.Nanotime() >= deadline {
			return ErrTimeout
		}
		if failed >= lockSpinTries {
			failed = 0
			wake := sys.Nanotime() + contendedSleepNs
			if deadline != 0 {
				wake = min(wake, deadline)
			}
			if err := sys.SleepUntil(wake); err != nil {
				return err
			}
		}
		v := atomic.LoadUint32(&m.state)
		if v == 0 {
			// Someone may still be asleep: keep the waiters bit.
			if atomic.CompareAndSwapUint32(&m.state, 0, selfPID|mutexWaiters) {
				return nil
			}
			continue
		}
		if !ownerAlive(v & mutexPIDMask) {
			if atomic.CompareAndSwapUint32(&m.state, v, selfPID|mutexWaiters) {
				return ErrOwnerDead
			}
			continue
		}
		if v&mutexWaiters == 0 && !atomic.CompareAndSwapUint32(&m.state, v, v|mutexWaiters) {
			continue
		}
		failed = 0
		wait := int64(ownerPollNs)
		if deadline != 0 {
			left := deadline - sys.Nanotime()
			if left <= 0 {
				return ErrTimeout
			}
			wait = min(wait, left)
		}
		if _, err := sys.FutexWait(&m.state, v|mutexWaiters, wait); err != nil {
			return err
		}
	}
}

// Unlock releases the lock and wakes one waiter: ErrNotLocked if it is not
// held, ErrNotOwner if another process holds it. It makes a FUTEX_WAKE only
// when someone waits.
// RT-safe.
func (m *Mutex) Unlock() error {
	v := atomic.LoadUint32(&m.state)
	switch {
	case v == 0:
		return ErrNotLocked
	case v&mutexPIDMask != selfPID:
		return ErrNotOwner
	}
	if atomic.SwapUint32(&m.state, 0)&mutexWaiters != 0 {
		if _, err := sys.FutexWake(&m.state, 1); err != nil {
			return err
		}
	}
	return nil
}

// Owner returns the pid of the process holding the lock, 0 when free.
// RT-safe.
func (m *Mutex) Owner() int { return int(atomic.LoadUint32(&m.state) & mutexPIDMask) }
