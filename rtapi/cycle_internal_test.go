package rtapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/backend"
)

// admitAll is a flavor that admits every lifecycle call, for hand-built
// tasks; its other methods are not called.
type admitAll struct{ backend.Flavor }

func (admitAll) Enter() (func(), error) { return func() {}, nil }

// scriptedThread is a virtual clock for one hand-built TaskContext: each
// Wait wakes exactly on its deadline, after running onWait.
type scriptedThread struct {
	now    int64
	waits  int
	onWait func()
}

func (s *scriptedThread) Now() int64                    { return s.now }
func (s *scriptedThread) Arm(first, period int64) error { return nil }
func (s *scriptedThread) Wait(deadline int64) (int64, uint64, error) {
	s.waits++
	s.now = max(s.now, deadline)
	if s.onWait != nil {
		s.onWait()
	}
	return s.now, 1, nil
}
func (s *scriptedThread) Suspend() error  { return nil }
func (s *scriptedThread) Close() error    { return nil }
func (s *scriptedThread) Begin()          {}
func (s *scriptedThread) EndCycle() int64 { return s.now }
func (s *scriptedThread) Kick(bool)       {}
func (s *scriptedThread) Rejoin()         {}
func (s *scriptedThread) Sleeps() int64   { return 0 }
func (s *scriptedThread) Interrupt()      {}

// A Pause and its Resume that both land after a wake-up and before the
// release is taken leave the release on time: the body runs the cycle it
// woke for, and no overrun is counted (in the one-shot sleep and with a
// periodic timer alike).
func TestPauseResumeAfterWakeUpIsNoOverrun(t *testing.T) {
	for _, oneshot := range []bool{true, false} {
		task := &Task{rt: &RT{flavor: admitAll{}}, spec: TaskSpec{Name: "racing"}, kick: make(chan struct{}, 1), done: make(chan struct{})}
		task.stats.init(DefaultHistogramBound)
		task.state.Store(stateRunning)
		clock := &scriptedThread{}
		tc := &task.tc
		tc.task, tc.waker = task, clock
		tc.period, tc.oneshot = int64(time.Millisecond), oneshot
		tc.sampleEvery, tc.nextSample = 1<<62, 1<<62

		paused := false
		clock.onWait = func() { // the Pause, just after the wake-up
			if !paused {
				paused = true
				require.NoError(t, task.Pause())
			}
		}
		controlHook = func() { // the Resume, before control looks
			if task.state.Load() == statePaused {
				require.NoError(t, task.Resume())
			}
		}
		require.True(t, tc.WaitPeriod())
		controlHook = nil
		require.True(t, paused)
		require.Equal(t, int64(time.Millisecond), tc.Release(), "oneshot %v: ran another release", oneshot)
		require.Zero(t, task.stats.overruns.Load(), "oneshot %v: an on-time release counted as an overrun", oneshot)
		require.Equal(t, 1, clock.waits, "oneshot %v: waited again for a release it had woken for", oneshot)
	}
}
