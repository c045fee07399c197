package rtapi_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// With as many default-shielded tasks as Ps, the rest of the program must
// still get a P: an ordinary goroutine's short sleeps finish in a few of
// the tasks' periods, not only when sysmon forcibly preempts a task that
// keeps its P (at most one preemption per P every 10 ms, so a starved
// sleep costs at least 5 periods of a 1 ms task; 16 were measured).
//
// The assertion is a count of task cycles per ordinary sleep, with a wide
// margin below the starved figure; it does not depend on how loaded the
// machine is, only on the other goroutine being runnable on a free P.
func TestShieldLeavesAPForTheRest(t *testing.T) {
	rttest.RequireRT(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off})
	var tasks []*rtapi.Task
	for _, name := range []string{"a", "b"} {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: name, Period: time.Millisecond}, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		tasks = append(tasks, task)
	}
	waitCycles(t, tasks[0], 50)
	waitCycles(t, tasks[1], 50)

	const sleeps = 50
	before := tasks[0].Stats().Cycles
	for range sleeps {
		time.Sleep(100 * time.Microsecond)
	}
	elapsed := tasks[0].Stats().Cycles - before
	t.Logf("%d sleeps of 100 µs took %d cycles of a 1 ms task", sleeps, elapsed)
	require.Less(t, elapsed, int64(4*sleeps), "the rest of the program starves: %d task cycles for %d short sleeps", elapsed, sleeps)

	// One P is kept: the first task started holds the other, and says so.
	require.Equal(t, "on", tasks[0].Stats().GCShield)
	require.Contains(t, tasks[1].Stats().GCShield, "off: GOMAXPROCS 2")

	// When it ends, the other task takes the P over.
	tasks[0].Stop()
	require.NoError(t, tasks[0].Wait())
	require.Equal(t, "on", tasks[1].Stats().GCShield)
}

// The P goes to forced tasks first, then to the shortest period, then to
// the highest priority; a forced set that leaves no P says so; a task that
// cannot use the shield says why.
func TestShieldChoosesShortestPeriods(t *testing.T) {
	rttest.RequireRT(t)
	if os.Getenv("GORTAPI_GC_SHIELD") != "" {
		t.Skip("GORTAPI_GC_SHIELD is set: the test needs the default shield")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off})
	specs := []rtapi.TaskSpec{
		{Name: "user", Period: 10 * time.Millisecond},
		{Name: "servo", Period: time.Millisecond},
		{Name: "base", Period: 100 * time.Microsecond, Priority: rt.PrioLowest()},
		{Name: "base-high", Period: 100 * time.Microsecond},
		{Name: "timerfd", Period: time.Millisecond, Wake: rtapi.WakeTimerfd},
		{Name: "unshielded", Period: 50 * time.Microsecond, GCShield: rtapi.Off},
	}
	tasks := map[string]*rtapi.Task{}
	for _, spec := range specs {
		task, err := rt.NewTask(spec, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		tasks[spec.Name] = task
	}
	shield := func(name string) string { return tasks[name].Stats().GCShield }
	require.Equal(t, "on", shield("base-high"))
	require.Equal(t, "on", shield("base"))
	require.Contains(t, shield("servo"), "off: GOMAXPROCS 3 leaves room for 2")
	require.Contains(t, shield("user"), "off: GOMAXPROCS 3")
	require.Contains(t, shield("timerfd"), "off: only the nanosleep wake mode")
	require.Equal(t, "off: GCShield Off", shield("unshielded"))

	// A forced task takes a P before any Auto one.
	forced, err := rt.NewTask(rtapi.TaskSpec{Name: "forced", Period: 5 * time.Millisecond, GCShield: rtapi.On}, loop)
	require.NoError(t, err)
	require.NoError(t, forced.Start())
	require.Equal(t, "on", forced.Stats().GCShield)
	require.Equal(t, "on", shield("base-high"))
	require.Contains(t, shield("base"), "off: GOMAXPROCS 3")

	// Forced tasks that leave no P are served, with a warning.
	for _, name := range []string{"forced2", "forced3"} {
		f, err := rt.NewTask(rtapi.TaskSpec{Name: name, Period: 5 * time.Millisecond, RawSleep: true}, loop)
		require.NoError(t, err)
		require.NoError(t, f.Start())
	}
	require.Contains(t, forced.Stats().GCShield, "on, forced; but 3 forced tasks keep their P")
	require.Contains(t, shield("base-high"), "off: GOMAXPROCS 3")
}
