package watchdog

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// endedTask is a Subject that already ended: the loop exits at its first
// check.
type endedTask struct{}

func (endedTask) Cycles() int64      { return 0 }
func (endedTask) Ended() bool        { return true }
func (endedTask) Fault(int64, int64) {}

// Wait returns only once the loop has run Exiting and left SCHED_FIFO,
// even when called after the loop marked itself stopped: the loop's
// thread lives on a moment after the loop, and a caller such as rtapi's
// Close promises no real-time thread is left.
func TestWaitReturnsOnceTheLoopLeftFIFO(t *testing.T) {
	rttest.RequireRT(t)
	hold := make(chan struct{})
	defer close(hold)
	exiting, gate := make(chan struct{}), make(chan struct{})
	var exited atomic.Bool
	d := New(Config{
		Priority: 10,
		Go: func(fn func()) {
			go func() {
				runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
				fn()
				<-hold // keeps the thread for the test to read its policy
			}()
		},
		Exiting: func(int) {
			close(exiting)
			<-gate
			exited.Store(true)
		},
	})
	d.Add(&Entry{Timeout: 4 * time.Millisecond, Subject: endedTask{}}, sys.Gettid())
	tid := d.Tid()
	p, prio, err := sys.Scheduler(tid)
	require.NoError(t, err)
	require.Equal(t, sys.SchedFIFO, p)
	require.Equal(t, 10, prio)

	<-exiting // the loop found nothing live and left: Running is false
	require.False(t, d.Running())
	go func() {
		time.Sleep(50 * time.Millisecond) // a Wait that returns early returns meanwhile
		close(gate)
	}()
	d.Wait(time.Minute)
	require.True(t, exited.Load(), "Wait returned before the loop's Exiting did")
	p, _, err = sys.Scheduler(tid)
	require.NoError(t, err, "the test holds the loop's thread")
	require.Equal(t, sys.SchedOther, p, "the loop's thread is still real-time after Wait")
}

// Wait on a Dog whose loop never started returns at once.
func TestWaitWithoutALoop(t *testing.T) {
	t.Parallel()
	d := New(Config{})
	d.Wait(time.Hour)
	require.False(t, d.Running())
}
