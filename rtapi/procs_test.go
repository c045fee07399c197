package rtapi

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
)

// fakeProcs is a GOMAXPROCS for procBoard's tests.
type fakeProcs struct{ v, sets int }

func (f *fakeProcs) procs(n int) int {
	old := f.v
	if n > 0 {
		f.v = n
		f.sets++
	}
	return old
}

func TestProcBoardCountsTasks(t *testing.T) {
	f := &fakeProcs{v: 2}
	b := procBoard{procs: f.procs, getenv: func(string) string { return "" }}
	for want := 3; want <= 5; want++ {
		counted, note := b.add()
		require.True(t, counted)
		require.Empty(t, note)
		require.Equal(t, want, f.v)
	}
	for want := 4; want >= 2; want-- {
		b.remove()
		require.Equal(t, want, f.v)
	}
	n, base := b.count()
	require.Equal(t, [2]int{0, 2}, [2]int{n, base})
	b.remove() // nothing counted: a no-op, never below the base
	require.Equal(t, 2, f.v)
	require.Equal(t, 6, f.sets)
}

// A GOMAXPROCS from the environment is the user's: never changed.
func TestProcBoardLeavesTheEnvironmentsGOMAXPROCS(t *testing.T) {
	f := &fakeProcs{v: 7}
	b := procBoard{procs: f.procs, getenv: func(k string) string {
		if k == "GOMAXPROCS" {
			return "7"
		}
		return ""
	}}
	counted, note := b.add()
	require.False(t, counted)
	require.Contains(t, note, "GOMAXPROCS=7 in the environment")
	require.Equal(t, 7, f.v)
	require.Zero(t, f.sets)
}

// A GOMAXPROCS the program changes while tasks run is the program's: the
// board stops touching it until every task it counted has ended, then
// starts again from the program's value.
func TestProcBoardLeavesAProgramsChange(t *testing.T) {
	f := &fakeProcs{v: 2}
	b := procBoard{procs: f.procs, getenv: func(string) string { return "" }}
	b.add()
	b.add()
	require.Equal(t, 4, f.v)
	f.v = 8 // runtime.GOMAXPROCS(8) by the program
	counted, note := b.add()
	require.True(t, counted, "counted, so that its end balances")
	require.Contains(t, note, "changed to 8 by the program")
	b.remove()
	b.remove()
	b.remove()
	require.Equal(t, 8, f.v)
	b.add()
	require.Equal(t, 9, f.v)
	b.remove()
	require.Equal(t, 8, f.v)

	// Changed between two ends: the rest of the ends leave it too.
	b.add()
	b.add()
	f.v = 3
	b.remove()
	b.remove()
	require.Equal(t, 3, f.v)
}

// Each running task holds one spare P from Start until it has ended,
// also one whose body returns on its own, and one whose Start fails. A
// task on the sim flavor, or with SpareProcs Off, holds none.
func TestSpareProcsFollowRunningTasks(t *testing.T) {
	// Not parallel: the board and GOMAXPROCS are the process's.
	core, logs := observer.New(zap.InfoLevel)
	rt, err := Open(Options{Flavor: "posix", LockMemory: Off, SpareProcs: On, Logger: zap.New(core)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	n0, _ := spareProcs.count()
	check := func(n int) {
		t.Helper()
		got, base := spareProcs.count()
		require.Equal(t, n0+n, got, "spare Ps counted")
		require.Equal(t, base+got, runtime.GOMAXPROCS(0))
	}
	newTask := func(name string, cycles int64) *Task {
		task, err := rt.NewTask(TaskSpec{Name: name, Period: time.Millisecond}, func(tc *TaskContext) error {
			for tc.WaitPeriod() && (cycles == 0 || tc.Cycle() < cycles) {
			}
			return nil
		})
		require.NoError(t, err)
		return task
	}
	a, b, short := newTask("a", 0), newTask("b", 0), newTask("short", 3)
	require.NoError(t, a.Start())
	check(1)
	require.NoError(t, b.Start())
	check(2)
	require.NoError(t, short.Start())
	require.NoError(t, short.Wait()) // its body returned: given back before Wait returns
	check(2)
	a.Stop()
	require.NoError(t, a.Wait())
	check(1)

	// A Start that fails gives its P back.
	if rttest.Emulator() == "" { // posix timers under an emulator: see flavors' TestWakerInterrupt
		bad, err := rt.NewTask(TaskSpec{Name: "bad", Period: time.Millisecond, Wake: WakePosixTimer}, loopBody)
		require.NoError(t, err)
		var lim unix.Rlimit
		require.NoError(t, unix.Getrlimit(unix.RLIMIT_SIGPENDING, &lim))
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_SIGPENDING, &unix.Rlimit{Cur: 0, Max: lim.Max}))
		err = bad.Start()
		require.NoError(t, unix.Setrlimit(unix.RLIMIT_SIGPENDING, &lim))
		require.Error(t, err, "timer_create with RLIMIT_SIGPENDING 0")
		check(1)
	}

	// Off, and the sim flavor (no OS threads), hold none.
	for _, o := range []Options{{Flavor: "posix", LockMemory: Off, SpareProcs: Off}, {Flavor: "sim", SpareProcs: On, Logger: zap.NewNop()}} {
		other, err := Open(o)
		require.NoError(t, err)
		task, err := other.NewTask(TaskSpec{Name: "other", Period: time.Millisecond}, loopBody)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		check(1)
		require.NoError(t, other.Close())
	}
	require.NoError(t, rt.Close())
	check(0)
	require.Zero(t, logs.FilterMessageSnippet("spare Ps").Len(), "nothing left alone, nothing to say")

	// GOMAXPROCS in the environment: left alone, and said once.
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	env, err := Open(Options{Flavor: "posix", LockMemory: Off, SpareProcs: On, Logger: zap.New(core)})
	require.NoError(t, err)
	for _, name := range []string{"e1", "e2"} {
		task, err := env.NewTask(TaskSpec{Name: name, Period: time.Millisecond}, loopBody)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		check(0)
	}
	require.NoError(t, env.Close())
	require.Equal(t, 1, logs.FilterMessageSnippet("in the environment is left alone").Len())
}

// On a real-time flavor spare Ps are the default, where the spin guard
// runs; with the guard off they are not.
func TestSpareProcsByDefaultWithTheSpinGuard(t *testing.T) {
	rttest.RequireRT(t)
	for _, guard := range []Toggle{Auto, Off} {
		rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off, SpinGuard: guard})
		require.NoError(t, err)
		n0, _ := spareProcs.count()
		task, err := rt.NewTask(TaskSpec{Name: "servo", Period: time.Millisecond}, loopBody)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		n, base := spareProcs.count()
		if guard == Auto {
			require.NotNil(t, task.guarded, "the spin guard runs")
			require.Equal(t, n0+1, n)
		} else {
			require.Equal(t, n0, n)
		}
		require.Equal(t, base+n, runtime.GOMAXPROCS(0))
		require.NoError(t, rt.Close())
		n, _ = spareProcs.count()
		require.Equal(t, n0, n)
	}
}

func loopBody(tc *TaskContext) error {
	for tc.WaitPeriod() {
	}
	return nil
}
