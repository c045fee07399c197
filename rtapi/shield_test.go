package rtapi_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// Which tasks get a P, and why, is decideShields' table test
// (TestDecideShields): that replaced TestShieldChoosesShortestPeriods and
// TestShieldLeavesAPForTheRest, which needed root and counted cycles
// against thresholds that failed under emulation. The tests below check
// the board's wiring end to end: Stats and warnings follow its decisions.

// A set that is stopping keeps the shield's decisions: a fast task that
// was told to stop but has not ended yet still keeps its P busy, so
// another task ending meanwhile must not hand a slower one a P it never
// had while the set ran (that made Stats.GCShield read "on" for a task
// that ran unshielded, as the benchmarks' shield column showed).
func TestShieldKeepsItsDecisionsWhileTheSetStops(t *testing.T) {
	rttest.RequireRT(t)
	if os.Getenv("GORTAPI_GC_SHIELD") != "" {
		t.Skip("GORTAPI_GC_SHIELD is set: the test needs the default shield")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	// Spare Ps off: the test hands out exactly 2.
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off, SpareProcs: rtapi.Off})
	hold, held, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	// base is fast enough to keep a P busy (under GCShieldMinPeriod) and
	// slow enough not to take a whole CPU under the race detector, where
	// SCHED_FIFO throttling would then starve the other tasks.
	// No watchdog: a task it faulted (an emulator's 70 ms stall in CI's
	// 386 guest) would end and hand its P over while the set runs.
	base, err := rt.NewTask(rtapi.TaskSpec{Name: "base", Period: 300 * time.Microsecond, Watchdog: -1}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			select {
			case <-hold: // stays in its body, told to stop or not
				close(held)
				<-release
			default:
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, base.Start())
	var slow []*rtapi.Task
	for _, spec := range []rtapi.TaskSpec{{Name: "servo", Period: time.Millisecond, Watchdog: -1}, {Name: "user", Period: 2 * time.Millisecond, Watchdog: -1}} {
		task, err := rt.NewTask(spec, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		slow = append(slow, task)
	}
	rttest.WaitFor(t, "every task on the shield board", func() bool {
		return base.Stats().GCShield != "" && slow[0].Stats().GCShield != "" && slow[1].Stats().GCShield != ""
	})
	// 2 Ps: one for the rest of the program, one kept busy by base.
	require.Contains(t, slow[0].Stats().GCShield, "off: GOMAXPROCS 2")

	close(hold)
	<-held
	base.Stop() // base is stopping, and still running
	slow[1].Stop()
	require.NoError(t, slow[1].Wait())
	require.Contains(t, slow[0].Stats().GCShield, "off: GOMAXPROCS 2",
		"a task ending while base stops must not hand servo the P base keeps busy")

	close(release)
	require.NoError(t, base.Wait())
	// Base has ended for good while servo runs on: now servo gets the P.
	require.Equal(t, "on", slow[0].Stats().GCShield)
}

// GCShield On on a task whose wake mode cannot keep a P (timerfd, a POSIX
// timer) is no claim on a P: its Stats say why it is off, with a warning,
// and the P goes to a nanosleep task that can use it (issue 21, defect 2).
// The board's decisions need no privilege: the posix flavor with
// Options.GCShield On offers the shield to every task.
func TestShieldOnIgnoredForTimerWakes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	core, logs := observer.New(zap.WarnLevel)
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, GCShield: rtapi.On, Logger: zap.New(core)})
	var timers []*rtapi.Task
	for _, wake := range []rtapi.WakeMode{rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake,
			GCShield: rtapi.On}, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		timers = append(timers, task)
	}
	servo, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, servo.Start())
	for _, task := range timers {
		require.Contains(t, task.Stats().GCShield, "off: only the nanosleep wake mode", task.Name())
	}
	require.Equal(t, "on", servo.Stats().GCShield)
	warned := map[string]bool{}
	for _, e := range logs.FilterMessage("GC shield").All() {
		warned[e.ContextMap()["task"].(string)] = true
	}
	require.True(t, warned["timerfd"], "%v", warned)
	require.True(t, warned["posix-timer"], "%v", warned)
	require.False(t, warned["servo"], "%v", warned)
}

// Options.GCShield is the default of TaskSpec.GCShield: a task that leaves
// its own Auto under Options.GCShield On is shielded as one that says On,
// even with a period under GCShieldMinPeriod. The board resolved the two
// apart (the instance's On counted as Auto there: "off: period under"),
// so RTAPI_GC_SHIELD=on did not do what GCShield On does.
func TestShieldInstanceOnIsTaskOn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, c := range []struct{ instance, task rtapi.Toggle }{{rtapi.Auto, rtapi.On}, {rtapi.On, rtapi.Auto}} {
		t.Run("Options "+c.instance.String()+", TaskSpec "+c.task.String(), func(t *testing.T) {
			rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, GCShield: c.instance})
			task, err := rt.NewTask(rtapi.TaskSpec{Name: "fast", Period: rtapi.GCShieldMinPeriod / 2, GCShield: c.task}, loop)
			require.NoError(t, err)
			require.NoError(t, task.Start())
			require.Equal(t, "on", task.Stats().GCShield)
		})
	}
}
