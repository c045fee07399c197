package rtapi_test

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi"
)

// noPreempt blocks (block true) or unblocks the Go runtime's preemption
// signal on the calling thread. A loop of raw system calls and atomic
// loads with it blocked has no preemption point, as the runtime's own
// spins have none: the scheduler cannot end the spin by parking the
// goroutine, which it otherwise does after 10 ms.
func noPreempt(block bool) {
	how := unix.SIG_UNBLOCK
	if block {
		how = unix.SIG_BLOCK
	}
	set := uint64(1) << (unix.SIGURG - 1)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, uintptr(how), uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
}

// holdOn runs an ordinary (SCHED_OTHER) goroutine pinned to cpu that waits
// until want is set and the thread *tid names runs SCHED_OTHER, then sets
// got: what a GC worker or sysmon holding a goroutine's scan bit does for
// the thread spinning in exitsyscall, except that it waits for the spin
// guard's demotion. (The kernel's fair server runs it now and then within
// a few milliseconds while the spinner still runs SCHED_FIFO: 5 of 100
// runs here.) It yields as the runtime's spin does, and never calls into
// the scheduler.
func holdOn(t *testing.T, cpu int, want *atomic.Bool, tid *atomic.Int64, got *atomic.Bool) {
	t.Helper()
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the affinity dies with the thread
		ready <- sys.SetAffinity(0, []int{cpu})
		noPreempt(true)
		for !want.Load() || !ordinary(int(tid.Load())) {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		got.Store(true)
		noPreempt(false)
	}()
	require.NoError(t, <-ready)
}

// ordinary reports whether thread tid runs SCHED_OTHER, with a raw system
// call.
func ordinary(tid int) bool {
	p, _, errno := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	return errno == 0 && p&^unix.SCHED_RESET_ON_FORK == uintptr(sys.SchedOther)
}

// A task thread that spins, yielding, until an ordinary thread on its CPU
// lets go — the Go runtime's livelock of docs/GC.md, built from plain
// threads — is let off its CPU by the spin guard: the holder runs, the
// spin ends, the task carries on and ends without a fault. Without the
// guard only the kernel ends such a spin, by RT throttling after about a
// second (1.03-1.15 s here) or by its fair server, sooner now and then,
// and nothing does where sched_rt_runtime_us is -1; this holder waits for
// the demotion, so only the guard ends this spin. The in-process watchdog
// does not get to run either, since its own return from sleep needs one of
// the two Ps the spinner and the starved holder hold.
func TestSpinGuardEndsASpinOverAnOrdinaryThread(t *testing.T) {
	rttest.RequireRT(t)
	cpu := lastCPU(t)
	// One P for the spinner, one for the holder (which keeps it while the
	// kernel starves its thread), one for this goroutine: with fewer,
	// the Go scheduler, not the kernel, deadlocks the two.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))
	// Nothing may stop the world between holdOn and the spin: the holder
	// cannot be preempted (its SIGURG is blocked) until the spin begins,
	// and the spinner, back from its sleep, cannot get a P while the
	// world is stopping, so the three waited for each other forever. A
	// GC cycle did that now and then (the test hung in 1 of about 5 runs
	// in a row), and so did the spare P that Start adds (GOMAXPROCS).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	t.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0))) // left alone: no spare P
	rt := open(t, rtapi.Options{Flavor: "rt-preempt", LockMemory: rtapi.Off})

	var started, spinning, released atomic.Bool
	var spinner atomic.Int64
	spinAt := int64(-1)
	task, err := rt.NewTask(rtapi.TaskSpec{
		// Only the guard may end the spin: under an emulator the
		// watchdog's timeout (55 ms) can come first.
		Name: "spins", Period: time.Millisecond, CPU: rtapi.OnCPU(cpu), Watchdog: -1,
	}, func(tc *rtapi.TaskContext) error {
		for tc.WaitPeriod() {
			// Start has returned, so the guard watches the thread:
			// spin a few cycles later. (The holder keeps a P while it
			// is starved and the spinner the other: from then on, no
			// goroutine of this process runs until the spin ends.)
			if spinAt < 0 && started.Load() {
				spinAt = tc.Cycle() + 5
			}
			if tc.Cycle() == spinAt {
				noPreempt(true)
				spinner.Store(int64(unix.Gettid()))
				spinning.Store(true)
				for !released.Load() {
					unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
				}
				noPreempt(false)
			}
			if spinAt > 0 && tc.Cycle() == spinAt+10 {
				return nil
			}
		}
		return nil
	})
	require.NoError(t, err)
	holdOn(t, cpu, &spinning, &spinner, &released)
	require.NoError(t, task.Start())
	started.Store(true)
	select {
	case <-task.Done():
	case <-time.After(liveness):
		t.Fatalf("the task did not end within %v", liveness)
	}
	require.NoError(t, task.Wait())
	require.True(t, released.Load())
	// The guard process reports a moment after it acted.
	rttest.WaitFor(t, "Stats.SpinBreaks to count the spin the guard ended", func() bool {
		return task.Stats().SpinBreaks >= 1
	})
}
