package ipc

import (
	"os"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
)

// selfPID is this process's pid, the owner tag a Mutex stores. Go processes
// do not fork without exec, so it never changes.
var selfPID = uint32(os.Getpid())

const (
	mutexPIDMask  = 1<<30 - 1 // pid_max is at most 2^22
	mutexWaiters  = 1 << 30
	ownerPollNs   = 20_000_000 // re-check a blocked owner's liveness every 20 ms
	lockSpinTries = 64
	// contendedSleepNs is how long Lock sleeps after lockSpinTries
	// compare-and-swaps in a row lost to another writer of the word.
	contendedSleepNs = 50_000
	// casTries bounds the compare-and-swap loops of Semaphore's
	// non-blocking calls.
	casTries = 64
)

// alive reports whether the process owning a lock word exists: this one,
// or one sys.ProcessAlive finds. A zero owner is no process, so an owner
// word another process zeroed never reads as held forever.
func alive(pid uint32) bool {
	return int32(pid) > 0 && (pid == selfPID || sys.ProcessAlive(int(pid)))
}

// ownerAlive is alive, as the blocking lock path asks it; a test replaces
// it to play a peer that rewrites the word between load and swap.
var ownerAlive = alive

// Mutex is a futex-based mutual-exclusion lock that lives in shared memory
// and works between processes and between goroutines of one process
// (rtapi_mutex_get/try/give, but sleeping instead of spinning). Its zero
// value is unlocked; it is 8 bytes, 4-byte aligned and pointer-free, so it
// can be embedded in a struct mapped onto a segment.
//
// The lock word holds the owner's pid. A locker that finds the owner
// process gone takes the lock over and gets ErrOwnerDead; a word that names
// no process (pid 0 with the waiters bit, as another process may write)
// counts as a dead owner, not as one alive forever. Goroutines of one
// process share a pid, so within a process the mutex cannot tell which
// goroutine holds it (like sync.Mutex, it is not reentrant and any goroutine
// of the owning process may unlock it).
type Mutex struct {
	state uint32
	_     uint32
}

// TryLock takes the lock if it is free and returns nil; ErrBusy if another
// live holder has it; ErrOwnerDead if it took it over from a dead process.
// It never blocks; when the lock is held it makes one kill(pid, 0) system
// call to check that the holder is alive.
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

// Lock takes the lock, waiting as long as needed. It returns nil, or
// ErrOwnerDead with the lock taken over from a dead process, or a system
// call error (the lock is then not held).
//
// Lock blocks: not for a real-time task body that must not sleep. It does
// not allocate.
func (m *Mutex) Lock() error { return m.lock(0) }

// LockDeadline is Lock with an absolute CLOCK_MONOTONIC deadline in
// nanoseconds, as rtapi.Now reads it (TaskContext.Now on the Linux
// flavors; never the sim flavor's virtual clock); ErrTimeout when it
// passes.
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
	// Every pass checks the deadline, a failed compare-and-swap included:
	// another process that keeps rewriting the word (with dead pids, say)
	// can make each one fail, and must not keep this loop past its
	// deadline. After lockSpinTries such failures in a row it sleeps
	// contendedSleepNs, so that it does not burn a CPU either.
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

// Unlock releases the lock and wakes one waiter. ErrNotLocked if it is not
// held, ErrNotOwner if another process holds it. It makes a FUTEX_WAKE
// system call only when someone waits.
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
