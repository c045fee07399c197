//go:build linux

package ipc

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func TestSemaphoreBasics(t *testing.T) {
	var s Semaphore
	assert.ErrorIs(t, s.TryTake(), ErrBusy)
	require.NoError(t, s.Give())
	require.NoError(t, s.Give())
	assert.Equal(t, 2, s.Count())
	require.NoError(t, s.Take())
	require.NoError(t, s.TryTake())
	assert.ErrorIs(t, s.TryTake(), ErrBusy)
	assert.ErrorIs(t, s.TakeDeadline(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
	assert.ErrorIs(t, s.TakeDeadline(0), ErrTimeout)
	s.count = math.MaxUint32
	assert.ErrorIs(t, s.Give(), ErrOverflow)
}

func TestSemaphoreTakeBlocksUntilGive(t *testing.T) {
	var s Semaphore
	got := make(chan error, 1)
	go func() { got <- s.Take() }()
	rttest.WaitFor(t, "Take to wait", func() bool { return atomic.LoadUint32(&s.waiters) != 0 })
	select {
	case err := <-got:
		t.Fatalf("Take returned at count 0: %v", err)
	default:
	}
	require.NoError(t, s.Give())
	require.NoError(t, <-got)
	assert.Zero(t, s.Count())
}

func TestSemaphoreDeadlineMet(t *testing.T) {
	var s Semaphore
	got := make(chan error, 1)
	go func() { got <- s.TakeDeadline(sys.Nanotime() + int64(10*time.Second)) }()
	// Give only once the taker waits, so TakeDeadline is woken, not
	// served from the count.
	rttest.WaitFor(t, "a waiter", func() bool { return atomic.LoadUint32(&s.waiters) != 0 })
	require.NoError(t, s.Give())
	require.NoError(t, <-got)
}

func TestSemaphoreAllocs(t *testing.T) {
	var s Semaphore
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = s.Give()
		_ = s.TryTake()
		_ = s.TryTake()
	}))
}

type pingPong struct {
	Ping, Pong Semaphore
	Rounds     uint64
}

func init() {
	children["pong"] = func(seg *shm.Segment) {
		v, _ := shm.View[pingPong](seg, 0)
		runtime.LockOSThread()
		for range v.Rounds {
			if err := v.Ping.Take(); err != nil {
				panic(err)
			}
			if err := v.Pong.Give(); err != nil {
				panic(err)
			}
		}
	}
}

func TestSemaphoreCrossProcessPingPong(t *testing.T) {
	seg := newSeg(t, 64)
	v, err := shm.View[pingPong](seg, 0)
	require.NoError(t, err)
	v.Rounds = 1000
	p := startChild(t, "pong", seg)
	for range v.Rounds {
		require.NoError(t, v.Ping.Give())
		require.NoError(t, v.Pong.Take())
	}
	p.wait(t)
}

// BenchmarkSemaphorePingPong is one round trip between two locked OS
// threads (the ptsematest pattern): give ping, the other takes it and gives
// pong.
func BenchmarkSemaphorePingPong(b *testing.B) {
	var v pingPong
	done := make(chan struct{})
	n := b.N
	go func() {
		runtime.LockOSThread()
		for range n {
			_ = v.Ping.Take()
			_ = v.Pong.Give()
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for range n {
		_ = v.Ping.Give()
		_ = v.Pong.Take()
	}
	<-done
}

func BenchmarkSemaphorePingPongCrossProcess(b *testing.B) {
	seg := newSeg(b, 64)
	v, _ := shm.View[pingPong](seg, 0)
	v.Rounds = uint64(b.N) + 1
	p := startChild(b, "pong", seg)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = v.Ping.Give() // warm-up round: the child is running
	_ = v.Pong.Take()
	b.ResetTimer()
	for range b.N {
		_ = v.Ping.Give()
		_ = v.Pong.Take()
	}
	b.StopTimer()
	p.wait(b)
}
