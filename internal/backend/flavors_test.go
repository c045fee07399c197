//go:build linux

package backend

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/kerneldetect"
)

func report(kind kerneldetect.Kind) *kerneldetect.Report {
	r := &kerneldetect.Report{Kind: kind}
	r.Uname.Release = "6.1.0-test"
	switch kind {
	case kerneldetect.PreemptRT:
		r.Preempt.Model = kerneldetect.ModelRT
	case kerneldetect.Xenomai:
		r.Xenomai = &kerneldetect.XenomaiInfo{Core: "cobalt"}
	case kerneldetect.Vanilla:
		r.Preempt = kerneldetect.PreemptInfo{Model: "voluntary", Dynamic: true, Mode: "none"}
	}
	return r
}

var (
	probeOK    = func(int) error { return nil }
	probeEPERM = func(int) error { return &os_SyscallError{} }
)

// os_SyscallError mimics what sys.ProbeSchedFIFO returns without privileges.
type os_SyscallError struct{}

func (*os_SyscallError) Error() string { return "sched_setattr: operation not permitted" }
func (*os_SyscallError) Unwrap() error { return unix.EPERM }

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	return zap.New(core), logs
}

func TestSelectAuto(t *testing.T) {
	tests := []struct {
		kind     kerneldetect.Kind
		fifo     bool
		probe    func(int) error
		strict   bool
		want     string
		wantRT   bool
		whyHas   string
		wantErr  error
		wantWarn bool
	}{
		{kind: kerneldetect.Vanilla, probe: probeOK, want: PosixName, whyHas: "preemption none, PREEMPT_DYNAMIC"},
		{kind: kerneldetect.Preempt, probe: probeOK, want: PosixName, whyHas: "VanillaFIFO"},
		{kind: kerneldetect.Vanilla, fifo: true, probe: probeOK, want: PosixName, wantRT: true, whyHas: "POSIX timers"},
		{kind: kerneldetect.Vanilla, fifo: true, probe: probeEPERM, want: PosixName, whyHas: "setcap cap_sys_nice", wantWarn: true},
		{kind: kerneldetect.Vanilla, fifo: true, probe: probeEPERM, strict: true, wantErr: ErrPermission},
		{kind: kerneldetect.PreemptRT, probe: probeOK, want: RTPreemptName, wantRT: true, whyHas: "PREEMPT_RT kernel 6.1.0-test"},
		{kind: kerneldetect.PreemptRT, probe: probeEPERM, want: PosixName, whyHas: "non-real-time posix", wantWarn: true},
		{kind: kerneldetect.PreemptRT, probe: probeEPERM, strict: true, wantErr: ErrPermission},
		{kind: kerneldetect.Xenomai, probe: probeOK, want: RTPreemptName, wantRT: true, whyHas: "no native Xenomai (cobalt) backend", wantWarn: true},
		{kind: kerneldetect.Xenomai, probe: probeOK, strict: true, wantErr: ErrNotSupported},
		{kind: kerneldetect.RTAI, probe: probeEPERM, want: PosixName, whyHas: "RTAI", wantWarn: true},
	}
	for _, tt := range tests {
		name := tt.kind.String()
		t.Run(name, func(t *testing.T) {
			log, logs := observed()
			c, err := Select("auto", Config{Kernel: report(tt.kind), VanillaFIFO: tt.fifo, Strict: tt.strict,
				Logger: log, TimerSignal: DefaultTimerSignal, Probe: tt.probe, LockMemory: LockNever})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			defer c.Flavor.Close()
			require.Equal(t, tt.want, c.Flavor.Name())
			require.Equal(t, tt.wantRT, c.Flavor.RealTime())
			require.Contains(t, c.Why, tt.whyHas)
			require.Equal(t, tt.wantWarn, logs.FilterLevelExact(zap.WarnLevel).Len() > 0, "warnings: %v", logs.All())
		})
	}
}

func TestSelectByName(t *testing.T) {
	_, err := Select("xenomai", Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla)})
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "valid: auto, ")
	require.Contains(t, err.Error(), PosixName)

	// A flavor asked for by name that cannot run fails: no silent fallback.
	_, err = Select(RTPreemptName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla), Probe: probeEPERM})
	require.ErrorIs(t, err, ErrPermission)
	require.ErrorIs(t, err, unix.EPERM)
	require.Contains(t, err.Error(), "setcap")

	c, err := Select(PosixName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.PreemptRT)})
	require.NoError(t, err)
	require.Equal(t, PosixName, c.Flavor.Name())
	require.Contains(t, c.Why, "asked for by name")
	require.Equal(t, Traits{OSThreads: true}, c.Flavor.Traits(), "CLOCK_MONOTONIC and a real OS thread per task")
	require.NoError(t, c.Flavor.Close())

	_, err = Select("", Config{})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestRegisterMisuse(t *testing.T) {
	require.Panics(t, func() { Register(Descriptor{}) })
	require.Panics(t, func() { Register(Descriptor{Name: PosixName, Open: openPosix}) })
	require.Contains(t, Names(), PosixName)
	require.Contains(t, Names(), RTPreemptName)
}

func TestResolveWakeRefusesUnknown(t *testing.T) {
	require.Equal(t, "wake(9)", WakeMode(9).String())
	_, err := ResolveWake(WakeMode(9), WakeNanosleep)
	require.ErrorIs(t, err, ErrInvalid)
}

// bindOnThread runs Bind on a fresh locked thread, as rtapi does, and
// reports what the kernel says about that thread.
func bindOnThread(t *testing.T, f Flavor, spec ThreadSpec) (Binding, sys.Policy, int, error) {
	type result struct {
		b      Binding
		policy sys.Policy
		prio   int
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread may be SCHED_FIFO
		w, b, err := f.Bind(spec)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer w.Close()
		p, prio, err := sys.Scheduler(0)
		if err == nil && spec.Period > 0 {
			err = w.Arm(w.Now()+spec.Period, spec.Period)
			for i := 0; i < 3 && err == nil; i++ {
				_, _, err = w.Wait(w.Now() + spec.Period)
			}
		}
		ch <- result{b, p, prio, err}
	}()
	r := <-ch
	return r.b, r.policy, r.prio, r.err
}

func TestBindRTPreempt(t *testing.T) {
	rttest.RequireRT(t)
	c, err := Select(RTPreemptName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla), LockMemory: LockNever})
	require.NoError(t, err)
	defer c.Flavor.Close()
	cpus, err := sys.Affinity(0)
	require.NoError(t, err)
	last := cpus[len(cpus)-1]
	for _, wake := range []WakeMode{WakeAuto, WakeNanosleep, WakeTimerfd, WakePosixTimer} {
		b, policy, prio, err := bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 30, CPUs: []int{last},
			Period: int64(200 * time.Microsecond), Wake: wake})
		require.NoError(t, err)
		require.Equal(t, sys.SchedFIFO, policy, "the kernel must see SCHED_FIFO")
		require.Equal(t, 30, prio)
		require.Equal(t, sys.SchedFIFO, b.Policy)
		require.Equal(t, []int{last}, b.CPUs)
		require.Empty(t, b.Degraded)
		if wake == WakeAuto {
			require.Equal(t, WakeNanosleep, b.Wake)
		} else {
			require.Equal(t, wake, b.Wake)
		}
	}
	_, _, _, err = bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 30, CPUs: []int{-1}})
	require.ErrorIs(t, err, unix.EINVAL)
	_, _, _, err = bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 30, Wake: WakeMode(7), Period: 1e6})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestBindVanillaFIFODefaultsToPosixTimer(t *testing.T) {
	rttest.RequireRT(t)
	c, err := Select("auto", Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla), VanillaFIFO: true, LockMemory: LockNever})
	require.NoError(t, err)
	defer c.Flavor.Close()
	b, policy, _, err := bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 10, Period: int64(time.Millisecond)})
	require.NoError(t, err)
	require.Equal(t, sys.SchedFIFO, policy)
	require.Equal(t, WakePosixTimer, b.Wake)
}

func TestPosixStaysSchedOther(t *testing.T) {
	c, err := Select(PosixName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.Vanilla)})
	require.NoError(t, err)
	defer c.Flavor.Close()
	b, policy, _, err := bindOnThread(t, c.Flavor, ThreadSpec{Name: "t", Priority: 10, Period: int64(time.Millisecond)})
	require.NoError(t, err)
	require.Equal(t, sys.SchedOther, policy)
	require.Equal(t, WakeNanosleep, b.Wake)
	lo, hi := c.Flavor.Priorities()
	require.Equal(t, 1, lo)
	require.Equal(t, 98, hi)
	require.Equal(t, MinPeriod, c.Flavor.MinPeriod())
}

func TestHardeningRefcount(t *testing.T) {
	rttest.RequireRT(t)
	a, err := Select(RTPreemptName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.PreemptRT), LockMemory: LockAlways})
	require.NoError(t, err)
	b, err := Select(RTPreemptName, Config{Logger: zap.NewNop(), TimerSignal: DefaultTimerSignal, Kernel: report(kerneldetect.PreemptRT), LockMemory: LockAlways})
	require.NoError(t, err)
	require.Contains(t, a.Why, "memory locked")
	require.NoError(t, a.Flavor.Close())
	hardenMu.Lock()
	stillLocked := hardenState.locked
	hardenMu.Unlock()
	require.True(t, stillLocked, "memory must stay locked while another flavor is open")
	require.NoError(t, b.Flavor.Close())
	require.NoError(t, b.Flavor.Close(), "Close twice")
	hardenMu.Lock()
	defer hardenMu.Unlock()
	require.False(t, hardenState.locked)
	require.Zero(t, hardenUsers)
}

func TestWakerAllocs(t *testing.T) {
	w, err := newWaker(WakeNanosleep, 0, nil)
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _, _ = w.Wait(w.Now() - 1) }))
	require.NoError(t, w.Close())
}

// Interrupt ends a wait when the control word is set, in every wake mode;
// with the word clear, the wait goes on to its release, the periodic
// timers back on their schedule.
func TestWakerInterrupt(t *testing.T) {
	rttest.ParallelUnlessRT(t)
	for _, mode := range []WakeMode{WakeNanosleep, WakeTimerfd, WakePosixTimer} {
		if e := rttest.Emulator(); e != "" && mode == WakePosixTimer {
			t.Log("posix-timer not run under " + e + ": it passes the kernel's timer id in the signal, " +
				"not the one it gave timer_create's caller, so Wait never matches the two")
			continue
		}
		t.Run(mode.String(), func(t *testing.T) {
			rttest.ParallelUnlessRT(t)
			done := make(chan struct{})
			go func() {
				defer close(done)
				runtime.LockOSThread() // never unlocked: the timer signal stays blocked
				var ctl atomic.Uint32
				w, err := newWaker(mode, DefaultTimerSignal, &ctl)
				require.NoError(t, err)
				defer w.Close()
				far := w.Now() + int64(time.Hour)
				require.NoError(t, w.Arm(far, int64(time.Hour)))
				// Interrupt the wait, once this thread sleeps in it.
				rttest.WhenAsleep(t, unix.Gettid(), func() {
					ctl.Store(1)
					w.Interrupt()
				})
				_, releases, err := w.Wait(far)
				require.NoError(t, err)
				require.Zero(t, releases, "%v: interrupted", mode)

				// An interrupt whose request was withdrawn: the wait
				// carries on to its release.
				ctl.Store(0)
				const period = int64(50 * time.Millisecond)
				next := w.Now() + period
				require.NoError(t, w.Arm(next, period))
				w.Interrupt()
				now, releases, err := w.Wait(next)
				require.NoError(t, err)
				// More than one when the machine held this thread off
				// its CPU for a period: not what is tested here.
				require.GreaterOrEqual(t, releases, uint64(1), "%v: the withdrawn interrupt ended the wait", mode)
				require.GreaterOrEqual(t, now, next, "%v: woken early", mode)
				now, releases, err = w.Wait(next + period)
				require.NoError(t, err)
				require.GreaterOrEqual(t, releases, uint64(1), "%v", mode)
				require.GreaterOrEqual(t, now, next+period, "%v: the schedule was kept", mode)
			}()
			<-done
		})
	}
}

// Sleeps counts kernel sleeps: one per wait (the cycle path does not wait
// for a release already past).
func TestWakerCountsSleeps(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w, err := newWaker(WakeNanosleep, DefaultTimerSignal, nil)
	require.NoError(t, err)
	defer w.Close()
	for try := 0; try < 10; try++ {
		before := w.Sleeps()
		_, _, err = w.Wait(w.Now() + int64(5*time.Millisecond))
		require.NoError(t, err)
		require.LessOrEqual(t, w.Sleeps(), before+1, "a wait is one sleep")
		if w.Sleeps() == before+1 {
			break
		}
		// None when the thread was held off its CPU past the whole
		// deadline (an emulator's stall in CI's 386 guest).
		require.Less(t, try, 9, "ten waits never slept")
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _, _ = w.Wait(w.Now() + 1000) }))
}
