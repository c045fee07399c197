package rtapi_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/rtapi"
)

// A task under the runtime guard holds a P of its own while the set
// runs: GOMAXPROCS one higher per task, and its nanosleep wait keeps the P.
// Stats.GCShield says whether it does, and why not.

// Without a spare P (GOMAXPROCS in the environment is left alone) no
// task keeps a P while it sleeps, and Stats say why: a raw sleep there
// would take a P from the rest of the program.
func TestShieldNeedsASpareP(t *testing.T) {
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.On})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.Contains(t, task.Stats().GCShield, "off: no P of its own: GOMAXPROCS=")
	off := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.Off})
	task, err = off.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.Contains(t, task.Stats().GCShield, "off: no P of its own: the runtime guard is off")
}

// A task whose wake mode cannot keep a P (timerfd, a POSIX timer) is no
// claim on a P: its Stats say why it is off, and the P goes to a
// nanosleep task that can use it (issue 21, defect 2). The board's
// decisions need no privilege: the posix flavor with Options.RuntimeGuard
// On offers the shield to every task.
func TestShieldOffForTimerWakes(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: the runtime guard leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.On})
	var timers []*rtapi.Task
	for _, wake := range []rtapi.WakeMode{rtapi.WakeTimerfd, rtapi.WakePosixTimer} {
		task, err := rt.NewTask(rtapi.TaskSpec{Name: wake.String(), Period: time.Millisecond, Wake: wake}, loop)
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
}

// Under the runtime guard every periodic task holds a P of its own,
// whatever its period (issue 39): a set's first Start raises GOMAXPROCS by
// one per task, and every task of 500 µs or slower keeps its P while it
// sleeps; a faster one keeps its P busy without. The slower tasks used to
// get a P only while one was left over after one for the rest of the
// program and one per fast task.
func TestEveryTaskHoldsAP(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: the runtime guard leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.On})
	var tasks []*rtapi.Task
	for _, spec := range []rtapi.TaskSpec{{Name: "base", Period: 100 * time.Microsecond}, {Name: "servo", Period: time.Millisecond},
		{Name: "user", Period: 10 * time.Millisecond}} {
		task, err := rt.NewTask(spec, loop)
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		require.NoError(t, task.Start())
	}
	require.Contains(t, tasks[0].Stats().GCShield, "off: period under 500µs")
	for _, task := range tasks[1:] {
		require.Equal(t, "on", task.Stats().GCShield, task.Name())
	}
	require.Equal(t, 5, runtime.GOMAXPROCS(0), "2 Ps and one per task")
}
