package rtapi

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gortapi/gortapi/internal/rttest"

	"github.com/stretchr/testify/require"
)

func TestShieldRaw(t *testing.T) {
	cases := []struct {
		name     string
		toggle   Toggle
		realTime bool
		instance Toggle // Options.GCShield
		want     bool
	}{
		{"auto on a real-time flavor", Auto, true, Auto, true},
		{"auto on posix", Auto, false, Auto, false},
		{"forced on posix", On, false, Auto, true},
		{"off", Off, true, Auto, false},
		{"instance off", Auto, true, Off, false},
		{"instance on, on posix", Auto, false, On, true},
		{"the task's own choice wins over the instance's", On, true, Off, true},
		{"the task's own off wins too", Off, false, On, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, shieldRaw(TaskSpec{GCShield: c.toggle}, c.realTime, c.instance))
		})
	}
}

// Close stops a set one task after another; the shield board must hand
// out no P meanwhile. A fast task stopped first can end (and leave the
// board, freeing the P it kept busy) before Close has told a slower task
// to stop: that task was handed the P for the last microseconds and its
// Stats.GCShield read "on" for a run it spent unshielded. The test holds
// the slower task's lock, so Close's Stop of it waits until the fast task
// has certainly ended.
func TestShieldCloseHandsOutNoP(t *testing.T) {
	rttest.RequireRT(t)
	if os.Getenv("GORTAPI_GC_SHIELD") != "" || os.Getenv("RTAPI_GC_SHIELD") != "" {
		t.Skip("the GC shield's default is changed in the environment: the test needs the default shield")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off, SpareProcs: Off}) // exactly 2 Ps
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			require.NoError(t, rt.Close())
		}
	})
	start := func(spec TaskSpec) *Task {
		task, err := rt.NewTask(spec, func(tc *TaskContext) error {
			for tc.WaitPeriod() {
			}
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, task.Start())
		return task
	}
	base := start(TaskSpec{Name: "base", Period: 100 * time.Microsecond}) // stopped first
	servo := start(TaskSpec{Name: "servo", Period: time.Millisecond})
	deadline := time.Now().Add(20 * time.Second)
	for servo.Stats().Cycles < 10 {
		require.True(t, time.Now().Before(deadline), "servo: %d cycles after 20 s", servo.Stats().Cycles)
		time.Sleep(time.Millisecond)
	}
	// 2 Ps: one for the rest of the program, one kept busy by base.
	require.Contains(t, servo.Stats().GCShield, "off: GOMAXPROCS 2")

	servo.mu.Lock() // Close's Stop of servo waits here
	done := make(chan error, 1)
	go func() { done <- rt.Close() }()
	<-base.Done() // stopped by Close, ended, off the board
	note := servo.shieldNote()
	servo.mu.Unlock()
	require.NoError(t, <-done)
	closed = true
	require.Contains(t, note, "off: GOMAXPROCS 2", "base ended while Close stopped the set: servo must not be handed its P")
	require.Contains(t, servo.Stats().GCShield, "off: GOMAXPROCS 2")
}

// A task whose thread joins the board after Close has frozen it (Start
// returned before Close began, the thread came up after) gets no P and
// says why.
func TestShieldJoinWhileClosing(t *testing.T) {
	rttest.RequireRT(t)
	if os.Getenv("GORTAPI_GC_SHIELD") != "" || os.Getenv("RTAPI_GC_SHIELD") != "" {
		t.Skip("the GC shield's default is changed in the environment: the test needs the default shield")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off, SpareProcs: Off}) // exactly 4 Ps
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	rt.shields.freeze() // as Close does before its first Stop
	task, err := rt.NewTask(TaskSpec{Name: "late", Period: time.Millisecond}, func(tc *TaskContext) error {
		for tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.Equal(t, "off: the RT was closing when the task started", task.Stats().GCShield)
	require.False(t, task.shield.raw.Load())
}
