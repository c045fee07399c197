//go:build linux

package sys_test

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

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
	for i := 0; i < 20; i++ {
		deadline := sys.Nanotime() + 200_000
		require.NoError(t, sys.SleepUntil(deadline))
		require.GreaterOrEqual(t, sys.Nanotime(), deadline)
	}
	// A deadline in the past returns at once.
	require.NoError(t, sys.SleepUntil(sys.Nanotime()-1e9))
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
		tm, err := sys.NewPosixTimer(int(sys.TimerSignal))
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

// A signal of the schedule that Arm replaces, already queued, does not
// end the first Wait after Arm: kernels before 6.13 deliver it after a
// re-arm (later ones drop it), which released a task one cycle early
// after Resume (Disarm, then Arm) and after Resync (Arm).
func TestPosixTimerArmDropsASignalOfTheOldSchedule(t *testing.T) {
	rttest.SkipIfEmulated(t, "qemu-user gives timer_create's caller a timer id of its own but passes the "+
		"kernel's id in the timer's signal, so Wait can never match the two")
	for _, disarm := range []bool{false, true} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the timer signal stays blocked
			tm, err := sys.NewPosixTimer(int(sys.TimerSignal))
			require.NoError(t, err)
			defer tm.Close()
			require.NoError(t, tm.Arm(sys.Nanotime()+int64(100*time.Microsecond), int64(time.Hour)))
			rttest.WaitFor(t, "the timer's signal pending", func() bool {
				var pending uint64
				_, _, errno := unix.RawSyscall(unix.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&pending)), 8, 0)
				return errno == 0 && pending&(1<<(sys.TimerSignal-1)) != 0
			})
			if disarm { // what Pause does
				require.NoError(t, tm.Disarm())
			}
			first := sys.Nanotime() + int64(50*time.Millisecond)
			require.NoError(t, tm.Arm(first, int64(time.Hour)))
			n, err := tm.Wait()
			now := sys.Nanotime()
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
			require.GreaterOrEqual(t, now, first, "disarm %v: released %v early by the old schedule's signal",
				disarm, time.Duration(first-now))
		}()
		<-done
	}
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

// MemlockLimit is the soft limit the kernel shows in /proc/self/limits,
// and follows it when it changes.
func TestMemlockLimit(t *testing.T) {
	got, err := sys.MemlockLimit()
	require.NoError(t, err)
	require.Equal(t, procMemlockSoft(t), got)

	// Lower the soft limit (always allowed), then put it back.
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim))
	lowered := lim
	lowered.Cur = min(lim.Cur, 64<<10) / 2
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &lowered))
	got, err = sys.MemlockLimit()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &lim))
	require.NoError(t, err)
	require.Equal(t, lowered.Cur, got)
	require.Equal(t, procMemlockSoft(t), lim.Cur)
}

// procMemlockSoft reads the soft "Max locked memory" of /proc/self/limits.
func procMemlockSoft(t *testing.T) uint64 {
	t.Helper()
	limits, err := os.ReadFile("/proc/self/limits")
	require.NoError(t, err)
	for _, line := range strings.Split(string(limits), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max locked memory"); ok {
			soft := strings.Fields(rest)[0]
			if soft == "unlimited" {
				return unix.RLIM_INFINITY
			}
			n, err := strconv.ParseUint(soft, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no Max locked memory in /proc/self/limits")
	return 0
}

func TestPolicyString(t *testing.T) {
	require.Equal(t, "SCHED_FIFO", sys.SchedFIFO.String())
	require.Equal(t, "SCHED_OTHER", sys.SchedOther.String())
	require.Equal(t, "policy(77)", sys.Policy(77).String())
}

// wakeWhenAsleep sets word and wakes its sleeper once thread tid sleeps,
// so the wake interrupts a sleep rather than landing before it.
func wakeWhenAsleep(t *testing.T, tid int, word *atomic.Uint32) {
	rttest.WhenAsleep(t, tid, func() {
		word.Store(1)
		sys.WakeSleeper(word)
	})
}

// SleepUntilOr ends at its deadline, or at once when its word is (or
// becomes) non-zero and the sleeper is woken.
func TestSleepUntilOr(t *testing.T) {
	runtime.LockOSThread() // wakeWhenAsleep watches this thread
	defer runtime.UnlockOSThread()
	var word atomic.Uint32
	deadline := sys.Nanotime() + 2_000_000
	interrupted, err := sys.SleepUntilOr(deadline, &word)
	require.NoError(t, err)
	require.False(t, interrupted)
	require.GreaterOrEqual(t, sys.Nanotime(), deadline, "never early")

	wakeWhenAsleep(t, unix.Gettid(), &word)
	interrupted, err = sys.SleepUntilOr(sys.Nanotime()+int64(time.Hour), &word)
	require.NoError(t, err)
	require.True(t, interrupted)
	interrupted, err = sys.SleepUntilOr(sys.Nanotime()+int64(time.Hour), &word)
	require.NoError(t, err)
	require.True(t, interrupted, "a non-zero word returns at once")
	word.Store(0)
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = sys.SleepUntilOr(sys.Nanotime()-1, &word) }))
	_, err = sys.SleepUntilOr(-5, &word)
	require.ErrorIs(t, err, unix.EINVAL)
	require.NoError(t, sys.SetMinimalTimerSlack())
}

// A POSIX timer refuses a signal that is not a free real-time one, and
// Fire makes both timers expire at once.
func TestTimerFireAndSignalRange(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the timer signal stays blocked
		for _, bad := range []int{0, 9, 33, 65} {
			_, err := sys.NewPosixTimer(bad)
			require.ErrorIs(t, err, unix.EINVAL, "signal %d", bad)
		}
		if e := rttest.Emulator(); e != "" {
			t.Log("Fire and Wait of a POSIX timer not run under " + e + ": it passes the kernel's timer id " +
				"in the signal, not the one it gave timer_create's caller, so Wait never matches the two")
			return
		}
		tm, err := sys.NewPosixTimer(45)
		require.NoError(t, err)
		blocked, err := sys.SignalBlocked(45)
		require.NoError(t, err)
		require.True(t, blocked)
		require.NoError(t, tm.Arm(sys.Nanotime()+int64(time.Hour), int64(time.Hour)))
		require.NoError(t, tm.Fire())
		n, err := tm.Wait()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		require.NoError(t, tm.Close())
	}()
	<-done
	tf, err := sys.NewTimerfd()
	require.NoError(t, err)
	require.NoError(t, tf.Arm(sys.Nanotime()+int64(time.Hour), int64(time.Hour)))
	require.NoError(t, tf.Fire())
	n, err := tf.Wait()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, tf.Close())
}
