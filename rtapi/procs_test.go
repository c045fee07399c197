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
	ts := []*Task{{}, {}, {}}
	for i, want := range []int{3, 4, 5} {
		require.Empty(t, b.add(ts[i:i+1]))
		require.Equal(t, want, f.v)
	}
	require.Empty(t, b.add(ts), "counted once")
	require.Equal(t, 5, f.v)
	for _, task := range ts[:2] {
		b.remove(task)
		require.Equal(t, 5, f.v, "given back only once no counted task is left")
	}
	b.remove(ts[2])
	require.Equal(t, 2, f.v)
	n, base := b.count()
	require.Equal(t, [2]int{0, 2}, [2]int{n, base})
	b.remove(ts[2]) // not counted: a no-op, never below the base
	require.Equal(t, 2, f.v)
	require.Equal(t, 4, f.sets)
}

// A set counted at its first Start raises GOMAXPROCS once, before any of
// its tasks runs; a task of the set ending while others run, or one
// starting within what was counted, does not change it (each change
// stops the world under the running tasks).
func TestProcBoardChangesGOMAXPROCSOnlyWithNoTaskRunning(t *testing.T) {
	f := &fakeProcs{v: 2}
	b := procBoard{procs: f.procs, getenv: func(string) string { return "" }}
	set := []*Task{{}, {}, {}}
	require.Empty(t, b.add(set))
	require.Equal(t, [2]int{5, 1}, [2]int{f.v, f.sets}, "one change for the set")
	b.add(set[1:2]) // its own Start
	b.add(set[2:])
	b.remove(set[0])
	require.Equal(t, [2]int{5, 1}, [2]int{f.v, f.sets})

	// Started or ended tasks are not counted by another's Start.
	started, ended := &Task{}, &Task{}
	started.state.Store(stateRunning)
	ended.state.Store(stateDone)
	b.add([]*Task{started, ended})
	require.Equal(t, [2]int{5, 1}, [2]int{f.v, f.sets})

	// A late task beyond the count raises it: a change is unavoidable.
	late := &Task{}
	b.add([]*Task{late})
	require.Equal(t, [2]int{5, 1}, [2]int{f.v, f.sets}, "set[0]'s P is still there")
	late2 := &Task{}
	b.add([]*Task{late2})
	require.Equal(t, [2]int{6, 2}, [2]int{f.v, f.sets})
	for _, task := range []*Task{set[1], set[2], late, late2} {
		b.remove(task)
	}
	require.Equal(t, [2]int{2, 3}, [2]int{f.v, f.sets})
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
	task := &Task{}
	require.Contains(t, b.add([]*Task{task}), "GOMAXPROCS=7 in the environment")
	require.False(t, task.spare, "not counted")
	require.Equal(t, 7, f.v)
	require.Zero(t, f.sets)
}

// A GOMAXPROCS the program changes while tasks run is the program's: the
// board stops touching it until every task it counted has ended, then
// starts again from the program's value.
func TestProcBoardLeavesAProgramsChange(t *testing.T) {
	f := &fakeProcs{v: 2}
	b := procBoard{procs: f.procs, getenv: func(string) string { return "" }}
	a, c := &Task{}, &Task{}
	b.add([]*Task{a, c})
	require.Equal(t, 4, f.v)
	f.v = 8 // runtime.GOMAXPROCS(8) by the program
	d := &Task{}
	require.Contains(t, b.add([]*Task{d}), "changed to 8 by the program")
	require.True(t, d.spare, "counted, so that its end balances")
	b.remove(a)
	b.remove(c)
	b.remove(d)
	require.Equal(t, 8, f.v)
	e := &Task{}
	b.add([]*Task{e})
	require.Equal(t, 9, f.v)
	b.remove(e)
	require.Equal(t, 8, f.v)

	// Changed before the last end: that end leaves it too.
	a, c = &Task{}, &Task{}
	b.add([]*Task{a, c})
	f.v = 3
	b.remove(a)
	b.remove(c)
	require.Equal(t, 3, f.v)
}

// The first Start of a set counts a spare P for each of its tasks and
// raises GOMAXPROCS once, before any of them runs. Ends give the Ps back
// once the last counted task has ended, also one whose body returns on
// its own, and one whose Start fails; GOMAXPROCS does not change while
// a counted task runs. A task on the sim flavor, or with RuntimeGuard
// Off, counts none.
func TestSpareProcsFollowRunningTasks(t *testing.T) {
	// Not parallel: the board and GOMAXPROCS are the process's.
	core, logs := observer.New(zap.InfoLevel)
	rt, err := Open(Options{Flavor: "posix", LockMemory: Off, RuntimeGuard: On, Logger: zap.New(core)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	n0, _ := spareProcs.count()
	// GOMAXPROCS changes, each with the tasks running then (an ending
	// task is "stopping", off SCHED_FIFO, as it gives its P back).
	var sets []int
	running := func() (n int) {
		for _, task := range rt.Tasks() {
			if task.State() == TaskRunning {
				n++
			}
		}
		return n
	}
	spareProcs.mu.Lock()
	spareProcs.procs = func(n int) int {
		if n > 0 {
			sets = append(sets, running())
		}
		return runtime.GOMAXPROCS(n)
	}
	spareProcs.mu.Unlock()
	t.Cleanup(func() {
		spareProcs.mu.Lock()
		spareProcs.procs = runtime.GOMAXPROCS
		spareProcs.mu.Unlock()
	})
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
	check(3) // the set, counted at its first Start
	require.Equal(t, []int{0}, sets, "raised once, before any task ran")
	require.NoError(t, b.Start())
	require.NoError(t, short.Start())
	require.NoError(t, short.Wait()) // its body returned: uncounted before Wait returns
	n, base := spareProcs.count()
	require.Equal(t, n0+2, n)
	require.Equal(t, base+n0+3, runtime.GOMAXPROCS(0), "kept while a and b run")
	a.Stop()
	require.NoError(t, a.Wait())
	require.Equal(t, []int{0}, sets, "no change while a task ran")
	b.Stop()
	require.NoError(t, b.Wait())
	check(0)
	require.Equal(t, []int{0, 0}, sets, "given back once none ran")
	sets = nil

	// A task never started gives back what another's Start counted for it.
	c, idle := newTask("c", 0), newTask("idle", 0)
	require.NoError(t, c.Start())
	check(2)
	require.NoError(t, idle.Delete())
	c.Stop()
	require.NoError(t, c.Wait())
	check(0)
	require.Equal(t, []int{0, 0}, sets)
	require.NoError(t, c.Delete())
	check(0)

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
		check(0)
	}

	// Off, and the sim flavor (no OS threads), hold none.
	for _, o := range []Options{{Flavor: "posix", LockMemory: Off, RuntimeGuard: Off}, {Flavor: "sim", RuntimeGuard: On, Logger: zap.NewNop()}} {
		other, err := Open(o)
		require.NoError(t, err)
		task, err := other.NewTask(TaskSpec{Name: "other", Period: time.Millisecond}, loopBody)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		check(0)
		require.NoError(t, other.Close())
	}
	require.NoError(t, rt.Close())
	check(0)
	require.Zero(t, logs.FilterMessageSnippet("spare Ps").Len(), "nothing left alone, nothing to say")

	// GOMAXPROCS in the environment: left alone, and said once.
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	env, err := Open(Options{Flavor: "posix", LockMemory: Off, RuntimeGuard: On, Logger: zap.New(core)})
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

// On a real-time flavor spare Ps are the default, where the guard
// process runs; with the runtime guard off they are not.
func TestSpareProcsByDefaultWithTheGuard(t *testing.T) {
	rttest.RequireRT(t)
	for _, guard := range []Toggle{Auto, Off} {
		rt, err := Open(Options{Flavor: "rt-preempt", LockMemory: Off, RuntimeGuard: guard})
		require.NoError(t, err)
		n0, _ := spareProcs.count()
		task, err := rt.NewTask(TaskSpec{Name: "servo", Period: time.Millisecond}, loopBody)
		require.NoError(t, err)
		require.NoError(t, task.Start())
		n, base := spareProcs.count()
		if guard == Auto {
			require.NotNil(t, rt.runningGuard(), "the guard process runs")
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

// Stats.OwnP says "yes", or "no: " and why the task has no P of its own.
func TestOwnPNote(t *testing.T) {
	t.Parallel()
	require.Equal(t, "yes", ownPNote(""))
	require.Equal(t, "no: GOMAXPROCS=2 in the environment is left alone", ownPNote("GOMAXPROCS=2 in the environment is left alone"))
}

// count returns the tasks counted and GOMAXPROCS before the first.
func (b *procBoard) count() (n, base int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.base
}
