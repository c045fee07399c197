package ipc

import (
	"math"
	"sync/atomic"

	"github.com/gortapi/gortapi/internal/sys"
)

// Semaphore is a counting semaphore in shared memory (rtapi_sem_give /
// take / try; Xenomai rt_sem). The zero value has count 0; it is 8 bytes,
// 4-byte aligned and pointer-free. A peer rewriting the count without end
// makes Give and TryTake return ErrBusy after 64 tries.
type Semaphore struct {
	count   uint32
	waiters uint32
}

// Give increments the count and wakes one waiter: ErrOverflow at the
// maximum count. It makes a FUTEX_WAKE only when someone waits.
// RT-safe.
func (s *Semaphore) Give() error {
	for try := 0; ; try++ {
		if try == casTries {
			return ErrBusy
		}
		c := atomic.LoadUint32(&s.count)
		if c == math.MaxUint32 {
			return ErrOverflow
		}
		if atomic.CompareAndSwapUint32(&s.count, c, c+1) {
			break
		}
	}
	if atomic.LoadUint32(&s.waiters) != 0 {
		if _, err := sys.FutexWake(&s.count, 1); err != nil {
			return err
		}
	}
	return nil
}

// TryTake decrements the count if it is above zero and returns nil, else
// ErrBusy.
// RT-safe.
func (s *Semaphore) TryTake() error {
	for range casTries {
		c := atomic.LoadUint32(&s.count)
		if c == 0 {
			return ErrBusy
		}
		if atomic.CompareAndSwapUint32(&s.count, c, c-1) {
			return nil
		}
	}
	return ErrBusy
}

// Take waits until the count is above zero and decrements it. It blocks; it
// does not allocate.
func (s *Semaphore) Take() error { return s.take(0) }

// TakeDeadline is Take with an absolute CLOCK_MONOTONIC deadline in
// nanoseconds (rtapi.Now; never the sim flavor's virtual clock);
// ErrTimeout when it passes.
func (s *Semaphore) TakeDeadline(deadlineNs int64) error {
	if deadlineNs <= 0 {
		deadlineNs = 1
	}
	return s.take(deadlineNs)
}

func (s *Semaphore) take(deadline int64) error {
	for {
		if s.TryTake() == nil {
			return nil
		}
		// Every pass: a peer changing the count wakes each wait at once.
		if deadline != 0 && sys.Nanotime() >= deadline {
			return ErrTimeout
		}
		atomic.AddUint32(&s.waiters, 1)
		var err error
		if deadline == 0 {
			_, err = sys.FutexWait(&s.count, 0, 0)
		} else {
			var woken bool
			woken, err = sys.FutexWaitUntil(&s.count, 0, deadline)
			if err == nil && !woken {
				err = ErrTimeout
			}
		}
		atomic.AddUint32(&s.waiters, ^uint32(0))
		if err != nil {
			if err == ErrTimeout && s.TryTake() == nil {
				return nil
			}
			return err
		}
	}
}

// Count returns the current count.
// RT-safe.
func (s *Semaphore) Count() int { return int(atomic.LoadUint32(&s.count)) }
