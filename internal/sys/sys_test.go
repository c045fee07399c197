//go:build linux

package sys_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

func TestNanotimeMonotonic(t *testing.T) {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
	a := sys.Nanotime()
	b := sys.Nanotime()
	require.LessOrEqual(t, ts.Nano(), a, "Nanotime must be CLOCK_MONOTONIC")
	require.LessOrEqual(t, a, b)
}

func TestSleepUntilNeverEarly(t *testing.T) {
	for _, sleep := range []func(int64) error{sys.SleepUntil, sys.SleepUntilRaw} {
		for i := 0; i < 20; i++ {
			deadline := sys.Nanotime() + 200_000
			require.NoError(t, sleep(deadline))
			require.GreaterOrEqual(t, sys.Nanotime(), deadline)
		}
		// A deadline in the past returns at once.
		require.NoError(t, sleep(sys.Nanotime()-1e9))
	}
}

func TestSleepUntilBadDeadline(t *testing.T) {
	err := sys.SleepUntil(-5)
	require.ErrorIs(t, err, unix.EINVAL)
	var se interface{ Unwrap() error }
	require.True(t, errors.As(err, &se))
}

func TestSleepUntilAllocs(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = sys.SleepUntil(sys.Nanotime() - 1) })
	require.Zero(t, allocs)
}

func TestSetSchedulerFIFO(t *testing.T) {
	rttest.RequireRT(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // the thread dies with the goroutine
		require.NoError(t, sys.SetScheduler(0, sys.SchedFIFO, 42))
		p, prio, err := sys.Scheduler(sys.Gettid())
		require.NoError(t, err)
		require.Equal(t, sys.SchedFIFO, p)
		require.Equal(t, 42, prio)
	}()
	<-done
}

func TestSetSchedulerMisuse(t *testing.T) {
	err := sys.SetScheduler(0, sys.SchedFIFO, 100)
	require.ErrorIs(t, err, unix.EINVAL)
	err = sys.SetScheduler(0, sys.SchedOther, 5)
	require.ErrorIs(t, err, unix.EINVAL)
	_, _, err = sys.Scheduler(-3)
	require.ErrorIs(t, err, unix.EINVAL)
}

func TestProbeSchedFIFORestores(t *testing.T) {
	rttest.RequireRT(t)
	require.NoError(t, sys.ProbeSchedFIFO())
	p, _, err := sys.Scheduler(0)
	require.NoError(t, err)
	require.Equal(t, sys.SchedOther, p)
}

func TestAffinity(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		all, err := sys.Affinity(0)
		require.NoError(t, err)
		require.NotEmpty(t, all)
		last := all[len(all)-1]
		require.NoError(t, sys.SetAffinity(0, []int{last}))
		got, err := sys.Affinity(sys.Gettid())
		require.NoError(t, err)
		require.Equal(t, []int{last}, got)
		require.ErrorIs(t, sys.SetAffinity(0, []int{-1}), unix.EINVAL)
		require.ErrorIs(t, sys.SetAffinity(0, []int{4000}), unix.EINVAL)
	}()
	<-done
}

func TestPosixTimerWakesItsThread(t *testing.T) {
	rttest.SkipIfEmulated(t, "qemu-user gives timer_create's caller a timer id of its own but passes the "+
		"kernel's id in the timer's signal, so Wait can never match the two")
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		tm, err := sys.NewPosixTimer()
		require.NoError(t, err)
		defer tm.Close()
		blocked, err := sys.SignalBlocked(sys.TimerSignal)
		require.NoError(t, err)
		require.True(t, blocked, "the timer signal must be blocked on the task thread")

		const period = 500_000
		start := sys.Nanotime() + period
		require.NoError(t, tm.Arm(start, period))
		var total uint64
		for i := 0; i < 10; i++ {
			n, err := tm.Wait()
			require.NoError(t, err)
			require.GreaterOrEqual(t, n, uint64(1))
			total += n
		}
		now := sys.Nanotime()
		// The expirations counted (overruns included) cover the time that passed.
		require.GreaterOrEqual(t, now, start+int64(total-1)*period)

		// Overruns: stay busy for several periods, then one signal reports them all.
		busyUntil := sys.Nanotime() + 5*period
		for sys.Nanotime() < busyUntil {
		}
		n, err := tm.Wait()
		require.NoError(t, err)
		require.Greater(t, n, uint64(1), "missed periods must show as overruns")
		require.NoError(t, tm.Disarm())
		require.NoError(t, tm.Close())
		require.NoError(t, tm.Close())
	}()
	<-done
}

func TestTimerfdTicks(t *testing.T) {
	tf, err := sys.NewTimerfd()
	require.NoError(t, err)
	defer tf.Close()
	const period = 500_000
	require.NoError(t, tf.Arm(sys.Nanotime()+period, period))
	n, err := tf.Wait()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, uint64(1))
	busyUntil := sys.Nanotime() + 5*period
	for sys.Nanotime() < busyUntil {
	}
	n, err = tf.Wait()
	require.NoError(t, err)
	require.Greater(t, n, uint64(1))
	allocs := testing.AllocsPerRun(5, func() { _, _ = tf.Wait() })
	require.Zero(t, allocs)
	require.NoError(t, tf.Disarm())
	require.NoError(t, tf.Close())
	require.NoError(t, tf.Close())
	_, err = tf.Wait()
	require.ErrorIs(t, err, unix.EBADF)
}

func TestThreadUsage(t *testing.T) {
	var u sys.ThreadUsage
	require.NoError(t, sys.ReadThreadUsage(&u))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = sys.ReadThreadUsage(&u) }))
}

func TestMemlockLimit(t *testing.T) {
	_, err := sys.MemlockLimit()
	require.NoError(t, err)
}

func TestPolicyString(t *testing.T) {
	require.Equal(t, "SCHED_FIFO", sys.SchedFIFO.String())
	require.Equal(t, "SCHED_OTHER", sys.SchedOther.String())
	require.Equal(t, "policy(77)", sys.Policy(77).String())
}
