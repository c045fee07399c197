package rtapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
)

// startLoop starts a 1 ms task that loops until stopped.
func startLoop(t *testing.T, rt *rtapi.RT, name string) *rtapi.Task {
	t.Helper()
	task, err := rt.NewTask(rtapi.TaskSpec{Name: name, Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.NoError(t, task.Start())
	return task
}

// Run returns nil when its context ends, after stopping every task and
// closing the RT.
func TestRunEndsWhenTheContextEnds(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "servo", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			if tc.Cycle() == 5 {
				cancel() // as a SIGINT would, from anywhere
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	require.NoError(t, rt.Run(ctx))
	require.Error(t, ctx.Err(), "Run returned before its context ended")
	select {
	case <-task.Done():
	default:
		t.Fatal("Run returned with the task still running")
	}
	_, err = rt.NewTask(rtapi.TaskSpec{Name: "late", Period: time.Millisecond}, loop)
	require.ErrorIs(t, err, rtapi.ErrClosed, "Run closes the RT")
}

// A task that fails ends the run: Run stops the others and returns the
// failure; a task that ends cleanly does not.
func TestRunEndsWhenATaskFails(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	other := startLoop(t, rt, "other")
	done, err := rt.NewTask(rtapi.TaskSpec{Name: "done", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.Cycle() < 2 && tc.WaitPeriod() {
		}
		return nil // ends cleanly: the run goes on
	})
	require.NoError(t, err)
	require.NoError(t, done.Start())
	errHoming := errors.New("homing switch not found")
	failing, err := rt.NewTask(rtapi.TaskSpec{Name: "failing", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		<-done.Done()
		for tc.Cycle() < 5 && tc.WaitPeriod() {
		}
		return errHoming
	})
	require.NoError(t, err)
	require.NoError(t, failing.Start())

	err = rt.Run(context.Background())
	require.ErrorIs(t, err, errHoming)
	var te *rtapi.TaskError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "failing", te.Task)
	select {
	case <-other.Done():
	default:
		t.Fatal("Run returned with another task still running")
	}
	require.NoError(t, done.Wait())
}

// A panicking body ends the run with its *PanicError.
func TestRunReportsAPanic(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	startLoop(t, rt, "other")
	task, err := rt.NewTask(rtapi.TaskSpec{Name: "panics", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		tc.WaitPeriod()
		panic("following error too large")
	})
	require.NoError(t, err)
	require.NoError(t, task.Start())
	var pe *rtapi.PanicError
	require.ErrorAs(t, rt.Run(context.Background()), &pe)
	require.Equal(t, "panics", pe.Task)
}

// WaitContext stops the task when its context ends and returns what
// Wait would; misuse and a body that will not stop give typed errors.
func TestWaitContext(t *testing.T) {
	// The default StopTimeout (seconds) for the tasks that stop: a loaded
	// machine may not run one within 50 ms, which only the stuck one tests.
	rt := open(t, rtapi.Options{Flavor: "posix"})

	task := startLoop(t, rt, "servo")
	waitCycles(t, task, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, task.WaitContext(ctx), "stopped because its context ended: a clean end")
	select {
	case <-task.Done():
	default:
		t.Fatal("WaitContext returned with the task running")
	}

	errBody := errors.New("spindle fault")
	failing, err := rt.NewTask(rtapi.TaskSpec{Name: "failing", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		tc.WaitPeriod()
		return errBody
	})
	require.NoError(t, err)
	require.NoError(t, failing.Start())
	require.ErrorIs(t, failing.WaitContext(context.Background()), errBody)

	created, err := rt.NewTask(rtapi.TaskSpec{Name: "created", Period: time.Millisecond}, loop)
	require.NoError(t, err)
	require.ErrorIs(t, created.WaitContext(context.Background()), rtapi.ErrState)

	// A body stuck outside WaitPeriod cannot be stopped: ErrTimeout after
	// StopTimeout, and the task still ends once the body lets go.
	held, release := make(chan struct{}), make(chan struct{})
	rt = open(t, rtapi.Options{Flavor: "posix", StopTimeout: 50 * time.Millisecond})
	stuck, err := rt.NewTask(rtapi.TaskSpec{Name: "stuck", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		tc.WaitPeriod()
		close(held)
		<-release
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, stuck.Start())
	<-held
	require.ErrorIs(t, stuck.WaitContext(ctx), rtapi.ErrTimeout)
	close(release)
	require.NoError(t, stuck.Wait())
}

// A Start that failed was the caller's to handle, and was returned to it:
// it is no task failure, so Run neither returns it nor ends the run over
// it (issue 21, defect 4). timer_create fails here because the process
// may queue no signal (RLIMIT_SIGPENDING 0, for the moment of the Start).
func TestRunIgnoresAFailedStart(t *testing.T) {
	if e := rttest.Emulator(); e != "" {
		t.Skip("posix timers under " + e + ": see flavors' TestWakerInterrupt")
	}
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- rt.Run(ctx) }()

	bad, err := rt.NewTask(rtapi.TaskSpec{Name: "bad", Period: time.Millisecond, Wake: rtapi.WakePosixTimer}, loop)
	require.NoError(t, err)
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_SIGPENDING, &lim))
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_SIGPENDING, &unix.Rlimit{Cur: 0, Max: lim.Max}))
	err = bad.Start()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_SIGPENDING, &lim))
	require.Error(t, err, "timer_create with RLIMIT_SIGPENDING 0")

	// A task ending cleanly wakes Run, which looks at every task again.
	short, err := rt.NewTask(rtapi.TaskSpec{Name: "short", Period: time.Millisecond}, func(tc *rtapi.TaskContext) error {
		for tc.Cycle() < 3 && tc.WaitPeriod() {
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, short.Start())
	servo := startLoop(t, rt, "servo")
	require.NoError(t, short.Wait())
	after := short.Stats().Cycles + 3
	rttest.WaitFor(t, "servo runs on after short ended", func() bool {
		select {
		case err := <-ran:
			t.Fatalf("Run ended over a Start the caller handled: %v", err)
		default:
		}
		return servo.Stats().Cycles >= after
	})
	cancel()
	require.NoError(t, <-ran)
}

// RT.Close, from anywhere (a host's shutdown handler), ends Run, which
// then returns nil when no task failed (issue 21, defect 5: Run was still
// blocked 2 s after Close, with every task done).
func TestRunEndsWhenTheRTCloses(t *testing.T) {
	rt, err := rtapi.Open(rtapi.Options{Flavor: "posix"})
	require.NoError(t, err)
	servo := startLoop(t, rt, "servo")
	waitCycles(t, servo, 3)
	ran := make(chan error, 1)
	go func() { ran <- rt.Run(context.Background()) }()
	require.NoError(t, rt.Close())
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(rttest.WaitTimeout):
		t.Fatalf("Run still blocked %v after Close returned", rttest.WaitTimeout)
	}

	// Run on an RT already closed returns at once.
	require.NoError(t, rt.Run(context.Background()))
}
