package rtapi_test

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
	"github.com/gortapi/gortapi/rtapi"
)

// Options.CPUs, the instance's options, each task's binding, Binding() and
// Stats() must not share one slice: a change to any of them after Open
// would reach sched_setaffinity unchecked, or change another task.
func TestCPUSlicesAreCopies(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	require.NoError(t, err)
	last := allowed[len(allowed)-1]
	cpus := []int{last}
	rt := open(t, rtapi.Options{Flavor: "posix", CPUs: cpus})
	cpus[0] = 4000 // the caller's slice, after Open

	first, err := rt.NewTask(rtapi.TaskSpec{Name: "first", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, first.Start(), "the caller's later change must not reach the task")
	require.Equal(t, []int{last}, first.Binding().CPUs)

	b := first.Binding()
	b.CPUs[0] = 4000
	st := first.Stats()
	st.CPUs[0] = 4001
	require.Equal(t, []int{last}, first.Binding().CPUs, "Binding returns a copy")
	require.Equal(t, []int{last}, first.Stats().CPUs, "Stats returns a copy")

	second, err := rt.NewTask(rtapi.TaskSpec{Name: "second", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, second.Start(), "nothing done to the first task's results reaches the second")
	got, err := sys.Affinity(second.Tid())
	require.NoError(t, err)
	require.Equal(t, []int{last}, got)

	// The same through the flags' Options.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := rtapi.RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"-rtapi.flavor=posix", fmt.Sprintf("-rtapi.cpu=%d", last)}))
	rt2 := open(t, *o)
	o.CPUs[0] = 4000
	third, err := rt2.NewTask(rtapi.TaskSpec{Name: "third", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, third.Start())
	require.Equal(t, []int{last}, third.Binding().CPUs)
}

// Every CPU list goes through one bounded parser: a huge range is refused
// without allocating an entry per CPU.
func TestCPUListsBounded(t *testing.T) {
	t.Setenv("RTAPI_CPU", "0-20000000")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "RTAPI_CPU")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated to refuse the list")

	t.Setenv("RTAPI_CPU", "")
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rtapi.RegisterFlags(fs)
	for _, bad := range []string{"0-20000000", "-1", "1,-2", "65536"} {
		require.Error(t, fs.Parse([]string{"-rtapi.cpu=" + bad}), bad)
	}
}

// OnCPU(n) with n negative is a mistake, not CPUAuto (-1) or Unpinned (-2).
func TestNegativeCPUChoice(t *testing.T) {
	rt := open(t, rtapi.Options{Flavor: "posix"})
	for _, n := range []int{-1, -2, -7} {
		_, err := rt.NewTask(rtapi.TaskSpec{Name: "neg", Period: time.Millisecond, CPU: rtapi.OnCPU(n)}, loop)
		require.ErrorIs(t, err, rtapi.ErrInvalid, "OnCPU(%d)", n)
		require.Contains(t, err.Error(), fmt.Sprintf("OnCPU(%d)", n))
	}
	_, err := rt.NewTask(rtapi.TaskSpec{Name: "neg", Period: time.Millisecond, CPU: rtapi.CPUChoice(-5)}, loop)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	_, err = rtapi.Open(rtapi.Options{Flavor: "posix", CPUs: []int{0, -3}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
}

// A CPU that is online but outside the process's cpuset is refused when it
// is named, with the cpuset in the message, not at Start as an untyped
// EINVAL from sched_setaffinity.
func TestCPUOutsideCpuset(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	require.NoError(t, err)
	outside := allowed[len(allowed)-1] + 1
	k, err := kerneldetect.Detect()
	require.NoError(t, err)
	k.OnlineCPUs = make([]int, outside+1) // online, as far as the report knows
	for i := range k.OnlineCPUs {
		k.OnlineCPUs[i] = i
	}
	cpuset := kerneldetect.FormatCPUList(allowed)

	_, err = rtapi.Open(rtapi.Options{Flavor: "posix", Kernel: k, CPUs: []int{outside}})
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "cpuset "+cpuset)

	rt := open(t, rtapi.Options{Flavor: "posix", Kernel: k})
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "outside", Period: time.Millisecond, CPU: rtapi.OnCPU(outside)}, loop)
	require.ErrorIs(t, err, rtapi.ErrInvalid)
	require.Contains(t, err.Error(), "cpuset "+cpuset)
}

// The cpuset is not the process's affinity: a process started on one CPU
// (taskset, or the default affinity isolcpus= leaves) may still pin a task
// to another CPU of its cpuset, such as an isolated one. The child is this
// test binary; it narrows every one of its threads to the first allowed
// CPU, as taskset would have, before it opens.
func TestPinOutsideAffinityInsideCpuset(t *testing.T) {
	allowed, err := sys.AllowedCPUs()
	require.NoError(t, err)
	last := allowed[len(allowed)-1]
	if rttest.ChildRole() == "narrowed" {
		narrowAllThreads(t, allowed[:1])
		mine, err := sys.Affinity(os.Getpid())
		require.NoError(t, err)
		require.Equal(t, allowed[:1], mine, "narrowed")
		rt := open(t, rtapi.Options{Flavor: "posix", CPUs: []int{last}})
		task, err := rt.NewTask(rtapi.TaskSpec{Name: "pinned", Period: time.Millisecond}, loop)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		got, err := sys.Affinity(task.Tid())
		require.NoError(t, err)
		require.Equal(t, []int{last}, got)
		return
	}
	if len(allowed) < 2 {
		t.Skipf("needs two CPUs in the cpuset, has %v", allowed)
	}
	cmd := rttest.Child("narrowed", "-test.run=^TestPinOutsideAffinityInsideCpuset$", "-test.v")
	cmd.Env = append(cmd.Env, "RTAPI_CPU=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	require.True(t, strings.Contains(string(out), "--- PASS: TestPinOutsideAffinityInsideCpuset"), "child:\n%s", out)
}

// narrowAllThreads sets the affinity of every thread of this process.
func narrowAllThreads(t *testing.T, cpus []int) {
	t.Helper()
	rttest.SettleAllThreads(t, func(tid int) bool {
		has, err := sys.Affinity(tid)
		if err != nil || slices.Equal(has, cpus) {
			return false // the thread has exited meanwhile, or is narrowed
		}
		_ = sys.SetAffinity(tid, cpus) // checked on the next pass
		return true
	})
}
