package guard_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/guard"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

func TestMain(m *testing.M) { os.Exit(rttest.Main(m)) }

// events collects a guard's events.
type events struct {
	demoted  atomic.Int64
	restored atomic.Int64
	ticks    atomic.Int64
	errs     chan error
	faults   chan guard.Event
}

func startGuard(t *testing.T) (*guard.Guard, *events) {
	t.Helper()
	ev := &events{errs: make(chan error, 16), faults: make(chan guard.Event, 16)}
	g, err := guard.Start(sys.FIFOPrioMax, time.Millisecond, func(e guard.Event) {
		switch {
		case e.Tick:
			ev.ticks.Add(1)
		case e.Fault:
			ev.faults <- e
		case e.Err != nil:
			select {
			case ev.errs <- e.Err:
			default:
			}
		case e.Demoted:
			ev.demoted.Add(1)
		default:
			ev.restored.Add(1)
		}
	}, func(err error) { t.Errorf("guard exited: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, ev
}

// TestGuardBreaksASpinOverASchedOtherHolder reproduces the Go runtime's
// livelock with plain threads: a SCHED_FIFO thread spins with sched_yield
// (as exitsyscall does) until a SCHED_OTHER thread on the same CPU sets a
// flag. Without the guard nothing ends the spin but the kernel's RT
// throttling or fair server (and nothing at all where sched_rt_runtime_us
// is -1); with it, the guard demotes the spinner, the holder runs, and the
// spinner is given its priority back. The holder lets go only once it sees
// the spinner demoted, so only the guard ends this spin.
func TestGuardBreaksASpinOverASchedOtherHolder(t *testing.T) {
	breakSpin(t, false, false)
}

// TestGuardBreaksASpinOnItsOwnCPU: the same with the guard on the
// spinner's CPU, as one of two spinning tasks on a 2-CPU machine always
// is. The guard's wake-ups preempt the spinner at every tick, so it is
// switched in again at every tick though it never sleeps; the guard took
// that for a break and left a 929 ms spin of a task set to RT throttling
// (docs/GC.md, "The guard's own CPU").
func TestGuardBreaksASpinOnItsOwnCPU(t *testing.T) {
	breakSpin(t, true, false)
}

// TestGuardBreaksASpinAfterCycles: the same spin by a thread whose task
// completed cycles until it began, for several of the guard's looks,
// which read only the schedstat of a thread whose cycle count moves: the
// first look after the count stops reads its stat again and the spin is
// still caught.
func TestGuardBreaksASpinAfterCycles(t *testing.T) {
	breakSpin(t, false, true)
}

// breakSpin runs the spin; with cycles, the spinner counts cycles in a
// slot for 30 ms first.
func breakSpin(t *testing.T, guardOnItsCPU, cycles bool) {
	rttest.RequireRT(t)
	cpus, err := sys.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skip("needs 2 CPUs: the spin takes one for its whole length")
	}
	cpu := cpus[len(cpus)-1]
	g, ev := startGuard(t)
	if guardOnItsCPU {
		// Every thread of the guard process; threads it makes later
		// inherit the affinity.
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", g.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				t.Fatal(err)
			}
			if err := sys.SetAffinity(tid, []int{cpu}); err != nil {
				t.Fatal(err)
			}
		}
	}

	var holderOn, spinning, released atomic.Bool
	var spinner atomic.Int64
	holderDone := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread goes with the goroutine
		if err := sys.SetAffinity(0, []int{cpu}); err != nil {
			holderDone <- err
			return
		}
		holderOn.Store(true)
		// Let go only once the guard demoted the spinner: the kernel's
		// fair server runs this thread now and then within a few
		// milliseconds while the spinner is still SCHED_FIFO.
		for !spinning.Load() || !ordinary(int(spinner.Load())) {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		released.Store(true)
		holderDone <- nil
	}()
	rttest.WaitFor(t, "the holder on its CPU", holderOn.Load)

	type result struct {
		tid         int
		policyAfter sys.Policy
		err         error
	}
	spinDone := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		tid := sys.Gettid()
		if err := sys.SetAffinity(0, []int{cpu}); err != nil {
			spinDone <- result{err: err}
			return
		}
		if err := sys.SetScheduler(0, sys.SchedFIFO, 80); err != nil {
			spinDone <- result{err: err}
			return
		}
		slot, index := (*guard.Slot)(nil), 0
		if cycles {
			var ok bool
			if slot, index, ok = g.NewSlot(); !ok {
				spinDone <- result{err: errors.New("no slot")}
				return
			}
			defer g.FreeSlot(index)
		}
		if err := g.Watch(tid, 80, 3*time.Millisecond, 0, index); err != nil {
			spinDone <- result{err: err}
			return
		}
		// Give the guard a tick to take the watch (with cycles, ten
		// bounds of cycles: ten looks or more), then spin.
		wait := 5 * time.Millisecond
		if cycles {
			wait = 30 * time.Millisecond
		}
		deadline := sys.Nanotime() + int64(wait)
		for sys.Nanotime() < deadline {
			if slot != nil {
				slot.Cycles.Add(1)
			}
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		spinner.Store(int64(tid))
		spinning.Store(true)
		for !released.Load() {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		// Wait (sleeping, so switched out) for the guard to give the
		// policy back. Under load it may have restored and demoted the
		// spinner more than once, the last demotion's restore still to
		// come: wait for the policy as well as the first restore's
		// event (the events come in order, the demotion's first).
		var p sys.Policy
		var err error
		for end := time.Now().Add(time.Minute); time.Now().Before(end); {
			if p, _, err = sys.Scheduler(0); err != nil || p == sys.SchedFIFO && ev.restored.Load() > 0 {
				break
			}
			_ = sys.SleepUntil(sys.Nanotime() + int64(time.Millisecond))
		}
		_ = g.Unwatch(tid)
		spinDone <- result{tid: tid, policyAfter: p, err: err}
	}()
	if err := <-holderDone; err != nil {
		t.Fatal(err)
	}
	r := <-spinDone
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := ev.demoted.Load(); n < 1 {
		t.Fatalf("the spin ended without a demotion event (demotions %d)", n)
	}
	if r.policyAfter != sys.SchedFIFO {
		t.Errorf("after the spin the thread runs %v, want SCHED_FIFO back", r.policyAfter)
	}
	select {
	case err := <-ev.errs:
		t.Errorf("guard reported %v", err)
	default:
	}
}

// TestGuardLeavesSleepersAlone watches a thread that sleeps and checks
// the guard never demotes it. (The bound is generous: a thread kept
// waiting for its CPU by a higher priority for a whole bound would be
// demoted too, and other programs' real-time threads may run here.)
func TestGuardLeavesSleepersAlone(t *testing.T) {
	rttest.RequireRT(t)
	g, ev := startGuard(t)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := sys.SetScheduler(0, sys.SchedFIFO, 97); err != nil {
			done <- err
			return
		}
		tid := sys.Gettid()
		if err := g.Watch(tid, 97, 50*time.Millisecond, 0, 0); err != nil {
			done <- err
			return
		}
		// A relative sleep: it always blocks, even where an emulated
		// machine runs late (an absolute one would then return at
		// once, catching up, and spin).
		for i := 0; i < 50; i++ {
			time.Sleep(time.Millisecond)
		}
		done <- g.Unwatch(tid)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := ev.demoted.Load(); n != 0 {
		t.Errorf("a thread that sleeps every millisecond was demoted %d times", n)
	}
}

// TestGuardSleepsUntilABoundCanPass watches a thread that sleeps every
// millisecond under a 3 ms bound: the guard need not look more than once
// a bound, and every look preempts whatever task shares its CPU. It
// counts the guard's sleeps (voluntary switches of all its threads, its
// runtime's included) over 300 ticks; one look a tick made 1.2 a tick.
func TestGuardSleepsUntilABoundCanPass(t *testing.T) {
	rttest.RequireRT(t)
	rttest.SkipIfCPUTimeEmulated(t, "counts the guard's sleeps against the clock and needs a 1 ms sleeper never to seem to run 3 ms")
	g, ev := startGuard(t)
	sleeps := func() int64 {
		var n int64
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", g.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", g.Pid(), task.Name()))
			if err != nil {
				continue // a thread that ended
			}
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					k, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					n += k
				}
			}
		}
		return n
	}
	done := make(chan error, 1)
	var before, after int64
	var elapsed time.Duration
	go func() {
		runtime.LockOSThread()
		if err := sys.SetScheduler(0, sys.SchedFIFO, 80); err != nil {
			done <- err
			return
		}
		tid := sys.Gettid()
		if err := g.Watch(tid, 80, 3*time.Millisecond, 0, 0); err != nil {
			done <- err
			return
		}
		time.Sleep(10 * time.Millisecond) // the guard takes the watch
		before = sleeps()
		start := time.Now()
		for time.Since(start) < 300*time.Millisecond {
			time.Sleep(time.Millisecond)
		}
		after, elapsed = sleeps(), time.Since(start)
		done <- g.Unwatch(tid)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := ev.demoted.Load(); n != 0 {
		t.Errorf("a thread that sleeps every millisecond was demoted %d times", n)
	}
	ticks := float64(elapsed) / float64(time.Millisecond)
	if perTick := float64(after-before) / ticks; perTick > 0.8 {
		t.Errorf("the guard slept %d times in %.0f ticks (%.2f a tick): it looks more often than a bound can pass", after-before, ticks, perTick)
	}
}

func TestGuardMisuse(t *testing.T) {
	for _, prio := range []int{0, 100, -1} {
		if _, err := guard.Start(prio, time.Millisecond, func(guard.Event) {}, nil); !errors.Is(err, guard.ErrStart) {
			t.Errorf("Start(prio %d) = %v, want ErrStart", prio, err)
		}
	}
	for _, tick := range []time.Duration{0, time.Microsecond, 2 * time.Second} {
		if _, err := guard.Start(10, tick, func(guard.Event) {}, nil); !errors.Is(err, guard.ErrStart) {
			t.Errorf("Start(tick %v) = %v, want ErrStart", tick, err)
		}
	}
}

// TestGuardRefusesWhatItCannotWatch: a thread that is not the process's,
// a bad priority or bound are refused with an event; the guard goes on.
func TestGuardRefusesWhatItCannotWatch(t *testing.T) {
	rttest.RequireRT(t)
	g, ev := startGuard(t)
	me := sys.Gettid()
	for _, w := range []struct {
		tid, prio      int
		bound, timeout time.Duration
		slot           int
	}{{1, 10, time.Millisecond, 0, 0}, {me, 0, time.Millisecond, 0, 0}, {me, 100, time.Millisecond, 0, 0}, {-5, 10, time.Millisecond, 0, 0},
		{me, 10, 0, 0, 0}, {me, 10, 0, time.Second, 1 << 20}} { // no rule; a slot outside the page
		if err := g.Watch(w.tid, w.prio, w.bound, w.timeout, w.slot); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ev.errs:
			t.Logf("watch(%d, %d): %v", w.tid, w.prio, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("watch(%d, %d): no refusal", w.tid, w.prio)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Watch(sys.Gettid(), 10, time.Millisecond, 0, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Watch after Close = %v, want os.ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// The watchdog rule: a SCHED_FIFO thread that completes no cycle (its
// slot's count stays put) and keeps its CPU for its timeout is demoted for
// good and reported once, with the count it stalled at; it is not given
// its policy back, though the spin rule watches it too. A thread that
// counts its cycles while it spins as long is left alone.
func TestGuardFaultsARunaway(t *testing.T) {
	rttest.RequireRT(t)
	g, ev := startGuard(t)
	const timeout = 30 * time.Millisecond
	type result struct {
		tid    int
		policy sys.Policy
		err    error
	}
	spin := func(count bool) result {
		done := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid := sys.Gettid()
			if err := sys.SetScheduler(0, sys.SchedFIFO, 10); err != nil {
				done <- result{err: err}
				return
			}
			slot, index, ok := g.NewSlot()
			if !ok {
				done <- result{err: errors.New("no slot")}
				return
			}
			defer g.FreeSlot(index)
			slot.Cycles.Store(7)
			if err := g.Watch(tid, 10, time.Second, timeout, index); err != nil {
				done <- result{err: err}
				return
			}
			// Spin on the CPU until demoted, or 4 timeouts while counting.
			end := sys.Nanotime() + int64(4*timeout)
			for n := int64(8); ; n++ {
				if count {
					slot.Cycles.Store(n)
					if sys.Nanotime() > end {
						break
					}
				} else if p, _, err := sys.Scheduler(0); err != nil || p == sys.SchedOther {
					time.Sleep(2 * timeout) // switched out: a restore would come now
					break
				}
			}
			_ = g.Unwatch(tid)
			p, _, err := sys.Scheduler(0)
			done <- result{tid: tid, policy: p, err: err}
		}()
		return <-done
	}
	r := spin(false)
	if r.err != nil {
		t.Fatal(r.err)
	}
	e := <-ev.faults
	if e.Tid != r.tid || e.Cycles != 7 || e.Stalled < timeout || e.Err != nil {
		t.Errorf("fault %+v, want tid %d at 7 cycles, stalled past %v", e, r.tid, timeout)
	}
	if r.policy != sys.SchedOther {
		t.Errorf("faulted thread at %v, want SCHED_OTHER for good", r.policy)
	}
	r = spin(true)
	if r.err != nil || r.policy != sys.SchedFIFO {
		t.Errorf("a counting thread: %v at %v, want SCHED_FIFO", r.err, r.policy)
	}
	select {
	case e := <-ev.faults:
		t.Errorf("a counting thread faulted: %+v", e)
	default:
	}
}

// TestGuardEndsWithItsParent: the guard process exits when this process
// closes the pipe (as it does when it exits).
func TestGuardEndsWithItsParent(t *testing.T) {
	rttest.RequireRT(t)
	g, _ := startGuard(t)
	pid := g.Pid()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("guard pid %d still there after Close: %v", pid, err)
	}
}

// TestGuardStartsUnderAHostThatIsPID1: in a container the host process is
// PID 1 of its PID namespace, and so its guard's parent. The guard
// refused a parent PID of 1 and exited, so no host in a container had
// one (docs/DEPLOY.md's recipe). Run here in a PID and mount namespace of
// its own, with /proc mounted for it, as a container runtime does.
func TestGuardStartsUnderAHostThatIsPID1(t *testing.T) {
	if rttest.ChildRole() == "pid1" {
		guardAsPID1(t)
		return
	}
	rttest.RequireRT(t)
	rttest.RequireSelfExec(t)
	cmd := rttest.Child("pid1", "-test.run=^TestGuardStartsUnderAHostThatIsPID1$", "-test.v")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Skipf("no PID namespace for a child here: %v", err) // a container without CAP_SYS_ADMIN
	}
	err := cmd.Wait()
	if err != nil || !strings.Contains(out.String(), "guard watched a thread as PID 1") {
		t.Fatalf("as PID 1: %v\n%s", err, out.String())
	}
}

func guardAsPID1(t *testing.T) {
	if os.Getpid() != 1 {
		t.Fatalf("pid %d, want 1", os.Getpid())
	}
	// /proc of this namespace, on a mount of its own: the guard reads
	// /proc/<its parent>/task/<tid>.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		t.Fatal(err)
	}
	g, ev := startGuard(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := g.Watch(sys.Gettid(), 10, time.Second, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ev.errs:
		t.Fatalf("watch refused: %v", err)
	default:
	}
	t.Log("guard watched a thread as PID 1")
}

// TestGuardThreadsAllRunAtItsPriority: the runtime may move the guard's
// loop to any thread of the guard process (after a preemption), so each
// must already run at the guard's priority. A SCHED_OTHER one on a CPU a
// spinning task held kept the guard itself waiting 133 ms, in a kernel
// trace of a 3-task set (docs/GC.md).
func TestGuardThreadsAllRunAtItsPriority(t *testing.T) {
	rttest.RequireRT(t)
	g, _ := startGuard(t)
	// The guard has answered (Start waits for it), so its set-up is done.
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", g.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 2 {
		t.Fatalf("%d threads: want the loop's and the runtime's", len(tasks))
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			t.Fatal(err)
		}
		p, prio, err := sys.Scheduler(tid)
		if err != nil {
			t.Fatal(err)
		}
		if p != sys.SchedFIFO || prio != sys.FIFOPrioMax {
			t.Errorf("guard thread %d runs %v priority %d, want SCHED_FIFO %d", tid, p, prio, sys.FIFOPrioMax)
		}
	}
}

// ordinary reports whether thread tid runs SCHED_OTHER, with a raw system
// call.
func ordinary(tid int) bool {
	p, _, errno := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	return errno == 0 && p&^unix.SCHED_RESET_ON_FORK == uintptr(sys.SchedOther)
}
