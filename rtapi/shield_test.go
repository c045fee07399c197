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
// runs: GOMAXPROCS one higher per task. Stats.OwnP says whether it does,
// and why not.

// Without a spare P (GOMAXPROCS in the environment is left alone) Stats
// say why.
func TestOwnPNeedsASpareP(t *testing.T) {
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.On})
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.Contains(t, task.Stats().OwnP, "no: GOMAXPROCS=")
	off := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.Off})
	task, err = off.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.Contains(t, task.Stats().OwnP, "no: the runtime guard is off")
}

// Under the runtime guard every task holds a P of its own, whatever its
// period or wake mode (issue 39): a set's first Start raises GOMAXPROCS by
// one per task. The slower tasks used to get a P only while one was left
// over after one for the rest of the program and one per fast task.
func TestEveryTaskHoldsAP(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: the runtime guard leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rt := open(t, rtapi.Options{Flavor: "posix", LockMemory: rtapi.Off, RuntimeGuard: rtapi.On})
	var tasks []*rtapi.Task
	for _, spec := range []rtapi.TaskSpec{{Name: "base", Period: 100 * time.Microsecond}, {Name: "servo", Period: time.Millisecond},
		{Name: "user", Period: 10 * time.Millisecond, Wake: rtapi.WakeTimerfd}} {
		task, err := rt.NewTask(spec, loop)
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		require.NoError(t, task.Start())
	}
	for _, task := range tasks {
		require.Equal(t, "yes", task.Stats().OwnP, task.Name())
	}
	require.Equal(t, 5, runtime.GOMAXPROCS(0), "2 Ps and one per task")
}
