package rtapi_test

import (
	"os"
	"slices"
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
// setting: @realtime - rtprio 50), SCHED_FIFO is allowed, only not at 98. Auto
// detection must not pick a flavor whose every default Start then fails,
// and VanillaFIFO must not silently degrade: the default priorities are
// clamped below the limit, the watchdog sits at the limit, and the flavor
// says so. The child is this test binary, run as nobody under the limit.
// Where the limit cannot be set (CI's root lacks CAP_SYS_RESOURCE) the test
// skips; .ci/realkernel.sh runs it inside booted kernels, where it must pass.
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
	// start only (root's own SCHED_FIFO does not depend on it). The hard
	// limit is raised only where it is below the child's (the kernel's
	// default is 0): that needs CAP_SYS_RESOURCE, and then putting it back
	// down needs nothing.
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim))
	if err := unix.Setrlimit(unix.RLIMIT_RTPRIO, &unix.Rlimit{Cur: childRTPrio, Max: max(lim.Max, childRTPrio)}); err != nil {
		// Some containers, CI's among them, drop CAP_SYS_RESOURCE even
		// for root, so this skips there. The real-kernel lane runs this
		// test as root inside a booted kernel, where it can raise the
		// limit, and fails when the test skips or fails there (flavors'
		// TestSelectUnderRTPrioLimit covers the selection logic
		// everywhere).
		t.Skipf("cannot give the child RLIMIT_RTPRIO %d (hard limit %d): %v; covered by the real-kernel lane "+
			"(.ci/realkernel.sh: go test -tags realkernel -run TestRealKernel ./examples/rtcheck/), "+
			"or run with CAP_SYS_RESOURCE or a hard rtprio limit of at least %d (docker run --ulimit rtprio=99)",
			childRTPrio, lim.Max, err, childRTPrio)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_RTPRIO, &lim))
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestRTPrioLimit", "child:\n%s", out)
	t.Logf("child, as uid %d with RLIMIT_RTPRIO %d:\n%s", rttest.Nobody.Uid, childRTPrio, out)
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
		t.Logf("%s: %s", info.Name, info.Why)
		// The task asks the kernel what its own thread runs with.
		kernelSays := make(chan schedAttr, 1)
		servo := func(tc *rtapi.TaskContext) error {
			policy, prio, err := sys.Scheduler(0)
			kernelSays <- schedAttr{policy, prio, err}
			return loop(tc)
		}
		// No watchdog: in an emulated guest on a loaded host the first
		// cycle can take tens of milliseconds of the thread's CPU time
		// (CI saw 68 ms against 55), and a fault here is not what this
		// test asks about. Everything else is the default.
		task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond, Watchdog: -1}, servo)
		require.NoError(t, err)
		require.NoError(t, task.Start(), "a default task starts")
		st := task.Stats()
		require.Equal(t, "SCHED_FIFO", st.Policy)
		require.Equal(t, childRTPrio-1, st.Priority)
		require.Empty(t, st.Degraded)
		waitCycles(t, task, 5)
		got := <-kernelSays
		require.NoError(t, got.err)
		require.Equal(t, sys.SchedFIFO, got.policy, "the task's thread, as sched_getattr sees it")
		require.Equal(t, childRTPrio-1, got.prio, "the task's thread, as sched_getattr sees it")
		// The runtime guard, a child process, runs at the limit.
		var prios []int
		rttest.WaitFor(t, "the guard at SCHED_FIFO at the limit", func() bool {
			prios = childFIFOPriorities(t)
			return slices.Contains(prios, childRTPrio)
		})
		t.Logf("%s: task servo runs %s %d (sched_getattr); the guard's SCHED_FIFO threads at %v", info.Name, got.policy, got.prio, prios)
		_, err = rt.NewTask(rtapi.TaskSpec{Name: "high", Priority: childRTPrio}, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "a priority the limit refuses is refused by NewTask")
		require.NoError(t, rt.Close())
	}
}

// schedAttr is what sched_getattr said about a thread.
type schedAttr struct {
	policy sys.Policy
	prio   int
	err    error
}

// childFIFOPriorities lists the SCHED_FIFO priorities of the threads of
// this process's children.
func childFIFOPriorities(t *testing.T) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	var tids []int
	for _, e := range tasks {
		children, err := os.ReadFile("/proc/self/task/" + e.Name() + "/children")
		if err != nil {
			continue // the thread has exited meanwhile
		}
		for _, pid := range strings.Fields(string(children)) {
			threads, err := os.ReadDir("/proc/" + pid + "/task")
			if err != nil {
				continue
			}
			for _, th := range threads {
				tid, err := strconv.Atoi(th.Name())
				require.NoError(t, err)
				tids = append(tids, tid)
			}
		}
	}
	var prios []int
	for _, tid := range tids {
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
