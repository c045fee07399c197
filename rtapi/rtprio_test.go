package rtapi_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// childRTPrio is the limits.d setting TestRTPrioLimit runs its child under.
const childRTPrio = 50

// With RLIMIT_RTPRIO below the default task priority (a common limits.d
// setting: @rt - rtprio 50), SCHED_FIFO is allowed, only not at 98. Auto
// detection must not pick a flavor whose every default Start then fails,
// and VanillaFIFO must not silently degrade: the default priorities are
// clamped below the limit, the watchdog sits at the limit, and the flavor
// says so. The child is this test binary, run as nobody under the limit.
func TestRTPrioLimit(t *testing.T) {
	if rttest.ChildRole() == "rtprio" {
		rtprioChild(t)
		return
	}
	rttest.RequireRoot(t, "starts a child as an unprivileged user with RLIMIT_RTPRIO 50")
	cmd := rttest.ChildAs(t, rttest.Nobody, "rtprio", "-test.run=^TestRTPrioLimit$", "-test.v")
	cmd.Env = append(cmd.Env, "RTAPI_FLAVOR=", "RTAPI_STRICT=", "RTAPI_CPU=",
		"RTAPI_VANILLA_FIFO=", "RTAPI_LOCK_MEMORY=")
	// Limits are inherited at fork: set this process's for the child's
	// start only (root's own SCHED_FIFO does not depend on it).
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim))
	// Only the soft limit changes: lowering the hard one could not be
	// undone without CAP_SYS_RESOURCE.
	if err := unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{Cur: childRTPrio, Max: lim.Max}); err != nil {
		// Raising a hard limit needs CAP_SYS_RESOURCE, which some
		// containers drop even for root (flavors' TestSelectUnderRTPrioLimit
		// covers the selection logic there).
		t.Skipf("cannot give the child RLIMIT_RTPRIO %d (hard limit %d): %v; run with CAP_SYS_RESOURCE, "+
			"or a hard rtprio limit of at least %d (docker run --ulimit rtprio=99)", childRTPrio, lim.Max, err, childRTPrio)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_RTPRIO, &lim))
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestRTPrioLimit", "child:\n%s", out)
}

func rtprioChild(t *testing.T) {
	require.NotZero(t, os.Geteuid(), "the child runs unprivileged")
	limit, err := sys.RTPrioLimit()
	require.NoError(t, err)
	require.EqualValues(t, childRTPrio, limit)

	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	k.Kind = kerneldetect.PreemptRT // auto detection on an RT kernel
	for _, o := range []rtapi.Options{
		{Kernel: k, LockMemory: rtapi.Off},
		{Flavor: "posix", VanillaFIFO: rtapi.On, LockMemory: rtapi.Off},
	} {
		rt, err := rtapi.Open(o)
		require.NoError(t, err)
		info := rt.Flavor()
		require.True(t, info.RealTime, info.Why)
		require.Contains(t, info.Why, "RLIMIT_RTPRIO 50")
		require.Equal(t, childRTPrio-1, rt.PrioHighest(), "tasks below the limit, the watchdog at it")
		task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start(), "a default task starts")
		st := task.Stats()
		require.Equal(t, "SCHED_FIFO", st.Policy)
		require.Equal(t, childRTPrio-1, st.Priority)
		require.Empty(t, st.Degraded)
		waitCycles(t, task, 5)
		require.Contains(t, fifoPriorities(t), childRTPrio, "the watchdog runs SCHED_FIFO at the limit")
		_, err = rt.NewTask(rtapi.TaskSpec{Name: "high", Priority: childRTPrio}, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "a priority the limit refuses is refused by NewTask")
		require.NoError(t, rt.Close())
	}
}

// fifoPriorities lists the SCHED_FIFO priorities of this process's threads.
func fifoPriorities(t *testing.T) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var prios []int
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		require.NoError(t, err)
		p, prio, err := sys.Scheduler(tid)
		if err != nil && strings.Contains(err.Error(), "no such process") {
			continue // the thread has exited meanwhile
		}
		require.NoError(t, err)
		if p == sys.SchedFIFO {
			prios = append(prios, prio)
		}
	}
	return prios
}
