package guard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunaway(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	for _, tc := range []struct {
		name                                  string
		timeout, stalled, cpuNow, cpuProgress int64
		want                                  bool
	}{
		{"spinning past its timeout", 20 * ms, 30 * ms, 100 * ms, 70 * ms, true},
		{"half the time on its CPU", 20 * ms, 30 * ms, 15 * ms, 0, true},
		{"within its timeout", 20 * ms, 20 * ms, 100 * ms, 0, false},
		{"held off its CPU", 20 * ms, 30 * ms, 14 * ms, 0, false},
		{"CPU time unreadable now", 20 * ms, 30 * ms, -1, 0, false},
		{"CPU time unreadable at progress", 20 * ms, 30 * ms, 100 * ms, -1, false},
	} {
		require.Equal(t, tc.want, Runaway(tc.timeout, tc.stalled, tc.cpuNow, tc.cpuProgress), tc.name)
	}
}

// The watchdog rule reads the task's count and idle flag from the shared
// slot: a new count or an idle task restarts the stretch; a stretch over
// the timeout, on the CPU for half of it, is a runaway.
func TestWatchdogRule(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	g := &guard{slots: slotsOf(make([]byte, PageSize))}
	w := &watched{slot: 3, timeout: 20 * ms}
	s := &g.slots[3]
	s.Cycles.Store(5)
	require.False(t, g.runaway(w, 0, 0), "progress: the count moved from 0 to 5")
	require.False(t, g.runaway(w, uint64(10*ms), 10*ms), "within the timeout")
	require.True(t, g.runaway(w, uint64(25*ms), 25*ms), "stalled 25 ms, on its CPU all along")
	require.False(t, g.runaway(w, uint64(26*ms), 60*ms), "stalled 60 ms but on its CPU 26 ms: held off it")
	s.Idle.Store(1)
	require.False(t, g.runaway(w, uint64(200*ms), 200*ms), "paused on purpose")
	s.Idle.Store(0)
	require.False(t, g.runaway(w, uint64(210*ms), 210*ms), "the pause restarted the stretch")
	require.True(t, g.runaway(w, uint64(240*ms), 240*ms))
	s.Cycles.Store(6)
	require.False(t, g.runaway(w, uint64(241*ms), 241*ms), "a cycle completed")
	require.Equal(t, int64(6), w.lastCycles)
}
