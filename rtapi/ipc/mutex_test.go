//go:build linux

package ipc

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func TestMutexBasics(t *testing.T) {
	t.Parallel()
	var m Mutex
	assert.Zero(t, m.Owner())
	require.NoError(t, m.Lock())
	assert.Equal(t, int(selfPID), m.Owner())
	assert.ErrorIs(t, m.TryLock(), ErrBusy)
	assert.ErrorIs(t, m.LockDeadline(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
	assert.ErrorIs(t, m.LockDeadline(0), ErrTimeout, "a past deadline times out")
	require.NoError(t, m.Unlock())
	assert.ErrorIs(t, m.Unlock(), ErrNotLocked)
	require.NoError(t, m.TryLock())
	require.NoError(t, m.Unlock())
}

func TestMutexNotOwner(t *testing.T) {
	t.Parallel()
	var m Mutex
	m.state = 1 // held by init, which is alive
	assert.ErrorIs(t, m.Unlock(), ErrNotOwner)
	assert.ErrorIs(t, m.TryLock(), ErrBusy)
}

func TestMutexDeadOwnerTry(t *testing.T) {
	t.Parallel()
	var m Mutex
	m.state = deadPID(t)
	assert.ErrorIs(t, m.TryLock(), ErrOwnerDead)
	assert.Equal(t, int(selfPID), m.Owner())
	require.NoError(t, m.Unlock())
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) uint32 {
	seg := newSeg(t, 64)
	p := startChild(t, "exit", seg)
	p.wait(t)
	return uint32(p.cmd.Process.Pid)
}

func init() { children["exit"] = func(*shm.Segment) {} }

func TestMutexContended(t *testing.T) {
	t.Parallel()
	var m Mutex
	contended(t, m.Lock, m.Unlock)
	assert.Zero(t, m.Owner())
}

// contended has 4 goroutines take the lock 2000 times each and checks
// that no two ever held it at once and that no increment was lost.
func contended(t *testing.T, lock, unlock func() error) {
	var inside int32
	counter := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				if err := lock(); err != nil {
					t.Error(err)
					return
				}
				if atomic.AddInt32(&inside, 1) != 1 {
					t.Error("two holders")
				}
				counter++
				atomic.AddInt32(&inside, -1)
				if err := unlock(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 8000, counter)
}

type sharedCounter struct {
	Lock  Mutex
	Count uint64
	Half  uint64 // Count and Half are updated together under Lock
}

func init() {
	children["mutex-hold"] = func(seg *shm.Segment) {
		v, _ := shm.View[sharedCounter](seg, 0)
		if err := v.Lock.Lock(); err != nil {
			panic(err)
		}
		v.Count++ // half-way through an update
		say("locked")
		for { // die holding the lock, killed; asleep on a timer, not "all goroutines are asleep"
			time.Sleep(time.Hour)
		}
	}
	children["mutex-count"] = func(seg *shm.Segment) {
		v, _ := shm.View[sharedCounter](seg, 0)
		for range 5000 {
			if err := v.Lock.Lock(); err != nil {
				panic(err)
			}
			v.Count++
			v.Half++
			if err := v.Lock.Unlock(); err != nil {
				panic(err)
			}
		}
	}
}

// A process SIGKILLed while holding the lock: a waiter blocked in Lock
// takes it over and learns the data may be inconsistent.
func TestMutexOwnerKilledWhileWaiting(t *testing.T) {
	t.Parallel()
	seg := newSeg(t, 64)
	v, err := shm.View[sharedCounter](seg, 0)
	require.NoError(t, err)
	p := startChild(t, "mutex-hold", seg)
	p.expect(t, "locked")
	assert.Equal(t, p.cmd.Process.Pid, v.Lock.Owner())
	got := make(chan error, 1)
	go func() { got <- v.Lock.Lock() }()
	select {
	case err := <-got:
		t.Fatalf("Lock returned while the owner lives: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.kill(t)
	require.ErrorIs(t, <-got, ErrOwnerDead)
	assert.Equal(t, int(selfPID), v.Lock.Owner())
	assert.NotEqual(t, v.Count, v.Half, "the dead owner's half update is visible: that is what ErrOwnerDead warns about")
	v.Half = v.Count // repair
	require.NoError(t, v.Lock.Unlock())
	require.NoError(t, v.Lock.Lock(), "after recovery the lock is normal")
	require.NoError(t, v.Lock.Unlock())
}

func TestMutexCrossProcessCounting(t *testing.T) {
	t.Parallel()
	seg := newSeg(t, 64)
	v, err := shm.View[sharedCounter](seg, 0)
	require.NoError(t, err)
	a := startChild(t, "mutex-count", seg)
	b := startChild(t, "mutex-count", seg)
	a.wait(t)
	b.wait(t)
	assert.Equal(t, uint64(10000), v.Count)
	assert.Equal(t, uint64(10000), v.Half)
	assert.Zero(t, v.Lock.Owner())
}

func TestMutexAllocs(t *testing.T) {
	var m Mutex
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = m.TryLock()
		_ = m.TryLock()
		_ = m.Unlock()
		_ = m.Lock()
		_ = m.Unlock()
		_ = m.Unlock()
	}))
}

func BenchmarkMutexUncontended(b *testing.B) {
	var m Mutex
	for b.Loop() {
		_ = m.Lock()
		_ = m.Unlock()
	}
}

func BenchmarkSyncMutexUncontended(b *testing.B) {
	var m sync.Mutex
	for b.Loop() {
		m.Lock()
		m.Unlock() //nolint:staticcheck // measuring the empty critical section
	}
}

// A peer that rewrites the lock word with another dead pid between each
// load and compare-and-swap made LockDeadline loop past its deadline: the
// 'continue' after a failed swap skipped the deadline check. Now every
// pass checks it, and the loop sleeps after 64 lost swaps in a row.
//
// Not parallel: it replaces the package's ownerAlive, which the parallel
// tests' Lock calls read (the race detector caught one of them taking
// the replacement, in 2 of 40 runs).
func TestLockDeadlineWhileAPeerRewritesTheWord(t *testing.T) {
	var m Mutex
	atomic.StoreUint32(&m.state, 4_000_001) // above any pid_max: dead
	calls := 0
	ownerAlive = func(pid uint32) bool {
		calls++
		if calls > 1_000_000 {
			panic("LockDeadline kept looping past its deadline")
		}
		atomic.StoreUint32(&m.state, 4_000_001+uint32(calls%1000)) // the peer's next dead pid
		return false
	}
	defer func() { ownerAlive = alive }()
	require.ErrorIs(t, m.LockDeadline(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
	require.ErrorIs(t, m.LockDeadline(1), ErrTimeout, "a deadline already past")
}
