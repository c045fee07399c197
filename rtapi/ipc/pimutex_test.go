//go:build linux

package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/errs"
	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// goOnThread runs f on a new goroutine locked to a thread of its own, not
// the process's main thread, and returns a channel closed when f has
// returned; the thread exits with the goroutine. (A goroutine that ends
// locked to the main thread leaves that thread wedged, alive.)
func goOnThread(f func()) <-chan struct{} {
	done := make(chan struct{})
	for {
		started := make(chan bool, 1)
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == unix.Getpid() {
				runtime.UnlockOSThread()
				started <- false
				return
			}
			started <- true
			defer close(done)
			f()
		}()
		if <-started {
			return done
		}
	}
}

// onThread is goOnThread, waiting for f.
func onThread(f func()) { <-goOnThread(f) }

func TestPIMutexBasics(t *testing.T) {
	var m PIMutex
	assert.Zero(t, m.Owner())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.NoError(t, m.Lock())
	assert.Equal(t, sys.Gettid(), m.Owner())
	assert.ErrorIs(t, m.Lock(), ErrRecursive)
	assert.ErrorIs(t, m.Lock(), errs.State, "ErrRecursive is an rtapi.ErrState")
	onThread(func() {
		assert.ErrorIs(t, m.TryLock(), ErrBusy)
		assert.ErrorIs(t, m.LockDeadline(sys.Nanotime()+int64(time.Millisecond)), ErrTimeout)
		assert.ErrorIs(t, m.LockDeadline(0), ErrTimeout, "a past deadline times out")
		assert.ErrorIs(t, m.Unlock(), ErrNotOwner)
	})
	require.NoError(t, m.Unlock())
	assert.Zero(t, m.Owner())
	assert.ErrorIs(t, m.Unlock(), ErrNotLocked)
	require.NoError(t, m.TryLock())
	require.NoError(t, m.Unlock())
}

// Lock and Unlock pair LockOSThread and UnlockOSThread: after a Lock,
// Unlock and a TryLock that failed, the goroutine's own lock is all that
// is left, so a goroutine that never locked its thread is free again.
func TestPIMutexLeavesTheThreadAsItWas(t *testing.T) {
	var m PIMutex
	tids := make(chan int, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		require.NoError(t, m.Lock())
		tids <- sys.Gettid()
		require.NoError(t, m.Unlock())
	}()
	wg.Wait()
	held := <-tids
	// The thread went back to the pool: it still exists (a thread that
	// stayed locked would have exited with its goroutine).
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(held))
	assert.NoError(t, err, "the thread that held the lock exited: Unlock left it locked")
}

func TestPIMutexContended(t *testing.T) {
	var m PIMutex
	contended(t, m.Lock, m.Unlock)
	assert.Zero(t, m.Owner())
}

// A thread that exits holding the lock, nobody waiting: the next Lock
// finds the word naming a thread that is gone and takes it over.
func TestPIMutexHolderThreadExited(t *testing.T) {
	var m PIMutex
	dead := lockAndExit(t, &m)
	require.Equal(t, dead, m.Owner())
	onThread(func() {
		require.ErrorIs(t, m.Lock(), ErrOwnerDead)
		assert.Equal(t, sys.Gettid(), m.Owner())
		require.NoError(t, m.Unlock())
	})
	lockAndExit(t, &m) // a dead owner is found by TryLock too
	require.ErrorIs(t, m.TryLock(), ErrOwnerDead)
	require.NoError(t, m.Unlock())
}

// lockAndExit locks m on a thread that then exits holding it, and
// returns that thread's id once it is gone.
func lockAndExit(t *testing.T, m *PIMutex) int {
	var tid int
	onThread(func() {
		require.NoError(t, m.Lock())
		tid = sys.Gettid()
	})
	rttest.WaitFor(t, "the holder's thread gone", func() bool {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
		return err != nil
	})
	return tid
}

// A thread that exits holding the lock while another waits in the kernel:
// the kernel hands the lock to the waiter with the owner-died bit, and
// the waiter learns it.
func TestPIMutexHolderExitsWhileWaited(t *testing.T) {
	var m PIMutex
	held := make(chan struct{})
	release := make(chan struct{})
	goOnThread(func() { // the thread ends with the goroutine
		require.NoError(t, m.Lock())
		close(held)
		<-release
	})
	<-held
	type result struct {
		tid int
		err error
	}
	got := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		err := m.Lock()
		got <- result{sys.Gettid(), err}
		<-done // keep holding it, on a live thread
		if err == nil || err == ErrOwnerDead {
			_ = m.Unlock()
		}
	}()
	// The kernel sets the word's waiters bit when it queues the waiter.
	rttest.WaitFor(t, "a waiter queued in the kernel", func() bool {
		return atomic.LoadUint32(&m.word)&sys.FutexWaiters != 0
	})
	close(release)
	r := <-got
	require.ErrorIs(t, r.err, ErrOwnerDead)
	assert.Equal(t, r.tid, m.Owner())
	assert.Zero(t, atomic.LoadUint32(&m.word)&sys.FutexOwnerDied, "the bit is cleared once reported")
	onThread(func() {
		assert.ErrorIs(t, m.TryLock(), ErrBusy, "the waiter's goroutine still holds it")
	})
	close(done)
}

func init() {
	children["pimutex-hold"] = func(seg *shm.Segment) {
		m, _ := PIMutexAt(seg, 0)
		if err := m.Lock(); err != nil {
			panic(err)
		}
		say("locked")
		for { // die holding the lock, killed; asleep on a timer, not "all goroutines are asleep"
			time.Sleep(time.Hour)
		}
	}
	children["pimutex-count"] = func(seg *shm.Segment) {
		v, _ := shm.View[piCounter](seg, 0)
		for range 5000 {
			if err := v.Lock.Lock(); err != nil {
				panic(err)
			}
			v.Count++
			if err := v.Lock.Unlock(); err != nil {
				panic(err)
			}
		}
	}
}

type piCounter struct {
	Lock  PIMutex
	Count uint64
}

// A process killed while holding the lock, a waiter in another process
// blocked in Lock: the waiter gets it, with ErrOwnerDead.
func TestPIMutexOwnerProcessKilled(t *testing.T) {
	seg := newSeg(t, 64)
	m, err := PIMutexAt(seg, 0)
	require.NoError(t, err)
	p := startChild(t, "pimutex-hold", seg)
	p.expect(t, "locked")
	owner := m.Owner()
	require.NotZero(t, owner)
	got := make(chan error, 1)
	go func() {
		err := m.Lock()
		if err == nil || err == ErrOwnerDead {
			defer func() { _ = m.Unlock() }()
		}
		got <- err
	}()
	rttest.WaitFor(t, "the waiter queued in the kernel", func() bool {
		return atomic.LoadUint32(&m.word)&sys.FutexWaiters != 0
	})
	p.kill(t)
	require.ErrorIs(t, <-got, ErrOwnerDead)
}

func TestPIMutexCrossProcessCounting(t *testing.T) {
	seg := newSeg(t, 64)
	v, err := shm.View[piCounter](seg, 0)
	require.NoError(t, err)
	a := startChild(t, "pimutex-count", seg)
	b := startChild(t, "pimutex-count", seg)
	a.wait(t)
	b.wait(t)
	assert.Equal(t, uint64(10000), v.Count)
	assert.Zero(t, v.Lock.Owner())
}

// Words a hostile writer may leave: each gives a result or a bounded
// wait, never a hang.
func TestPIMutexHostileWords(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, tc := range []struct {
		name string
		word uint32
		want error
	}{
		{"waiters bit, no owner", sys.FutexWaiters, nil},
		{"owner-died bit, no owner", sys.FutexOwnerDied, ErrOwnerDead},
		{"every bit", 0xffffffff, ErrOwnerDead}, // tid 0x3fffffff: no such thread
		{"a live thread that is not a holder (init)", 1, ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := PIMutex{word: tc.word}
			err := m.LockDeadline(sys.Nanotime() + int64(20*time.Millisecond))
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
			if err == nil || err == ErrOwnerDead {
				assert.Equal(t, sys.Gettid(), m.Owner())
				require.NoError(t, m.Unlock())
			}
		})
	}
}

func TestPIMutexAllocs(t *testing.T) {
	var m PIMutex
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = m.TryLock()
		_ = m.Unlock()
		_ = m.Lock()
		_ = m.Unlock()
		_ = m.Unlock()
	}))
}

// threadState reads a thread's state letter and the CPU it last ran or
// is queued on (/proc/self/task/TID/stat fields 3 and 39).
func threadState(tid int) (state byte, cpu int, ok bool) {
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+2:]) // f[0] is field 3
	if len(f) < 37 {
		return 0, 0, false
	}
	cpu, err = strconv.Atoi(string(f[36]))
	return f[0][0], cpu, err == nil
}

// fifoOn makes the calling thread SCHED_FIFO prio, on one CPU when
// cpu >= 0.
func fifoOn(cpu, prio int) error {
	if err := sys.SetScheduler(0, sys.SchedFIFO, prio); err != nil {
		return err
	}
	if cpu < 0 {
		return nil
	}
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// inversion runs the classic priority inversion on one CPU and reports
// whether the high-priority waiter got the lock before the
// medium-priority hog had finished, and how long it waited:
//
//   - low (FIFO 10) takes the lock and works;
//   - high (FIFO 30) blocks in lock;
//   - medium (FIFO 20), which never touches the lock, spins for hogFor.
//
// Low ends its critical section once it has seen the hog queued on its
// CPU, runnable, for 2 ms, or the hog done. Without priority inheritance
// the hog preempts low as soon as it is queued there, so low sees it only
// done, and high waits for the whole spin; with it low runs at 30, sees
// the hog waiting, and releases. Each runs on a thread of its own, never
// the main one (goOnThread), which ends with it.
func inversion(cpu int, lock, unlock func() error, hogFor time.Duration) (beforeHogDone bool, waited time.Duration, err error) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no stop-the-world while a thread is starved
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(8, runtime.GOMAXPROCS(0))))
	var hogDone, hogTid atomic.Int64
	held := make(chan error, 1)
	lowDone := make(chan error, 1)
	goOnThread(func() { // low
		if err := fifoOn(cpu, 10); err != nil {
			held <- err
			return
		}
		if err := lock(); err != nil {
			held <- err
			return
		}
		held <- nil
		var seen time.Time
		for hogDone.Load() == 0 {
			tid := int(hogTid.Load())
			if tid == 0 {
				continue
			}
			if st, c, ok := threadState(tid); !ok || c != cpu || st != 'R' {
				seen = time.Time{}
			} else if seen.IsZero() {
				seen = time.Now()
			} else if time.Since(seen) > 2*time.Millisecond {
				break // the hog waits on this CPU while we run: we were boosted
			}
		}
		lowDone <- unlock()
	})
	if err := <-held; err != nil {
		return false, 0, err
	}
	type result struct {
		before bool
		waited time.Duration
		err    error
	}
	highTid := make(chan int, 1)
	high := make(chan result, 1)
	goOnThread(func() { // high
		if err := fifoOn(cpu, 30); err != nil {
			highTid <- 0
			high <- result{err: err}
			return
		}
		highTid <- sys.Gettid()
		start := time.Now()
		err := lock()
		r := result{hogDone.Load() == 0, time.Since(start), err}
		if err == nil {
			err = unlock()
		}
		if r.err == nil {
			r.err = err
		}
		high <- r
	})
	if tid := <-highTid; tid != 0 {
		for deadline := time.Now().Add(rttest.WaitTimeout); !rttest.Asleep(tid); time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				return false, 0, fmt.Errorf("the high-priority thread did not block in lock within %v", rttest.WaitTimeout)
			}
		}
	}
	hogExit := make(chan error, 1)
	goOnThread(func() { // medium: FIFO on the CPU it is on, then moved onto low's
		if err := fifoOn(-1, 20); err != nil {
			hogDone.Store(1)
			hogExit <- err
			return
		}
		hogTid.Store(int64(sys.Gettid()))
		var set unix.CPUSet
		set.Set(cpu)
		err := unix.SchedSetaffinity(0, &set)
		// Not preemptible by the Go scheduler: with its preemption
		// signal blocked and no function call in the loop (Nanotime
		// inlines to the runtime's nosplit clock), sysmon cannot park
		// the hog after 10 ms and let low run meanwhile, which made
		// the plain Mutex seem to bound the inversion on a loaded
		// machine.
		noGoPreempt(true)
		for end := sys.Nanotime() + int64(hogFor); err == nil && sys.Nanotime() < end; {
		}
		noGoPreempt(false)
		hogDone.Store(1)
		hogExit <- err
	})
	r := <-high
	return r.before, r.waited, errors.Join(r.err, <-lowDone, <-hogExit)
}

// inversionChild is the "inversion" role: inversion with a PIMutex (args
// "pi") or a Mutex ("plain") on CPU args[1], the hog spinning args[2]; it
// prints "before=BOOL waited=NANOSECONDS" and returns the exit code.
func inversionChild(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "inversion: want pi|plain CPU HOGFOR, got", args)
		return 2
	}
	cpu, err1 := strconv.Atoi(args[1])
	hogFor, err2 := time.ParseDuration(args[2])
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "inversion:", err)
		return 2
	}
	var before bool
	var waited time.Duration
	var err error
	switch args[0] {
	case "pi":
		var m PIMutex
		before, waited, err = inversion(cpu, m.Lock, m.Unlock, hogFor)
	case "plain":
		var m Mutex
		before, waited, err = inversion(cpu, m.Lock, m.Unlock, hogFor)
	default:
		err = fmt.Errorf("no mutex %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inversion:", err)
		return 1
	}
	fmt.Printf("before=%t waited=%d\n", before, waited.Nanoseconds())
	return 0
}

// inversionHang is how long inversionInChild lets a child run: the
// scenario takes hogFor and a few milliseconds.
var inversionHang = time.Minute

// inversionInChild runs inversion in a fresh process (the role above),
// so that no goroutine or runtime state of other tests shares it with the
// starved threads. A child that outlives inversionHang is logged (its
// threads' policy, priority, state and CPU times, then its goroutines
// after a SIGQUIT) and killed, and the scenario runs once more: once, in
// CI, the package hung 8 minutes with a FIFO 20 thread busy on one CPU
// and a FIFO 10 one starved behind it, a state no run has repeated.
func inversionInChild(t *testing.T, kind string, cpu int, hogFor time.Duration) (before bool, waited time.Duration) {
	t.Helper()
	for try := 1; ; try++ {
		var out, errOut bytes.Buffer
		cmd := rttest.Child("inversion", kind, strconv.Itoa(cpu), hogFor.String())
		cmd.Env = append(cmd.Env, "GOTRACEBACK=system")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			require.NoError(t, err, "inversion %s child: %s", kind, errOut.String())
			var ns int64
			_, err = fmt.Sscanf(out.String(), "before=%t waited=%d", &before, &ns)
			waited = time.Duration(ns)
			require.NoError(t, err, "inversion %s child printed %q", kind, out.String())
			return before, waited
		case <-time.After(inversionHang):
		}
		threads := rttest.ThreadStates(cmd.Process.Pid)
		_ = cmd.Process.Signal(unix.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		msg := fmt.Sprintf("inversion %s child, try %d, still ran after %v; its threads:\n%s\nits output:\n%s%s", kind, try, inversionHang, threads, out.String(), errOut.String())
		if try == 2 {
			t.Fatal(msg)
		}
		t.Log(msg)
	}
}

// noGoPreempt blocks (block true) or unblocks the Go runtime's preemption
// signal on the calling thread.
func noGoPreempt(block bool) {
	how := unix.SIG_UNBLOCK
	if block {
		how = unix.SIG_BLOCK
	}
	set := uint64(1) << (unix.SIGURG - 1)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, uintptr(how), uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
}

// The PI mutex bounds a priority inversion that the plain Mutex does not:
// with it the high-priority waiter gets the lock while the hog still
// spins; with Mutex only after the hog is done.
func TestPIMutexBoundsPriorityInversion(t *testing.T) {
	rttest.RequireRT(t)
	rttest.SkipIfEmulated(t, "the emulator's own threads decide what runs")
	cpus, err := sys.AllowedCPUs()
	require.NoError(t, err)
	if len(cpus) < 2 {
		t.Skip("needs 2 CPUs: one for the three real-time threads, one for the rest of the process")
	}
	const hogFor = 200 * time.Millisecond
	pi, piWait := inversionInChild(t, "pi", cpus[len(cpus)-1], hogFor)
	plain, plainWait := inversionInChild(t, "plain", cpus[len(cpus)-1], hogFor)
	t.Logf("high-priority wait behind a low-priority holder, a %v medium hog on the same CPU: PIMutex %v, Mutex %v", hogFor, piWait, plainWait)
	assert.True(t, pi, "with PIMutex the waiter got the lock only after the hog was done: no priority inheritance")
	assert.False(t, plain, "with Mutex the waiter got the lock before the hog was done: the inversion did not happen, so the test shows nothing")
}

func BenchmarkPIMutexUncontended(b *testing.B) {
	var m PIMutex
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		_ = m.Lock()
		_ = m.Unlock()
	}
}
