//go:build linux

package guard

import (
	"errors"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/internal/sys"
)

// parked starts a thread that blocks until the test ends and returns its
// tid.
func parked(t *testing.T) int {
	t.Helper()
	tids := make(chan int)
	end := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tids <- unix.Gettid()
		<-end
	}()
	t.Cleanup(func() { close(end) })
	return <-tids
}

// A thread the guard gives its policy back to while the watchdog faults
// it stays demoted, wherever it sits in the guard's table: the watchdog
// unwatches it before demoting it for good, and the guard reads that
// right after its restore. The guard used to look the thread up again
// through its table slot, which the unwatch had just filled with another
// thread, and left the faulted one at SCHED_FIFO.
func TestRestoreKeepsAFaultedThreadDemoted(t *testing.T) {
	restoreUnwatched(t, false)
}

// The same when the parent closed the command pipe after the unwatch, as
// RT.Close does once its tasks have ended: the guard read the unwatch and
// the end of file together, and skipped its check on the end of file,
// leaving a thread of an ended task at SCHED_FIFO.
func TestRestoreKeepsAFaultedThreadDemotedAtEndOfCommands(t *testing.T) {
	restoreUnwatched(t, true)
}

func restoreUnwatched(t *testing.T, eof bool) {
	rttest.RequireRT(t)
	faulted, other := parked(t), parked(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	r, w := p[0], p[1]
	defer unix.Close(r)
	defer func() {
		if !eof {
			unix.Close(w)
		}
	}()
	devnull, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(devnull)

	g := &guard{ppid: unix.Getpid(), prio: 2, tick: 1_000_000, in: r, out: devnull, table: make([]watched, 0, maxWatched)}
	bound := int64(3_000_000)
	for _, tid := range []int{faulted, other} {
		g.apply(record{op: opWatch, tid: uint32(tid), arg: 1, value: bound})
	}
	defer func() {
		for i := range g.table {
			g.table[i].close()
		}
	}()
	if len(g.table) != 2 || g.table[0].tid != faulted {
		t.Fatalf("table %+v: want the faulted thread first of two", g.table)
	}
	// The guard demoted it one bound ago; the watchdog has since
	// unwatched it and set SCHED_OTHER, and the guard reads that only
	// after its restore.
	if e := sys.SetSchedulerRaw(faulted, sys.SchedOther, 0); e != 0 {
		t.Fatal(e)
	}
	now := nanotime()
	g.table[0].demoted, g.table[0].demotedAt = true, now-2*bound
	var b [recordSize]byte
	record{op: opUnwatch, tid: uint32(faulted)}.put(&b)
	if _, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(w), uintptr(unsafe.Pointer(&b[0])), recordSize); e != 0 {
		t.Fatal(e)
	}
	if eof {
		unix.Close(w)
	}

	g.check(&g.table[0], now, false)

	policy, _, err := sys.Scheduler(faulted)
	if err != nil {
		t.Fatal(err)
	}
	if policy != sys.SchedOther {
		t.Errorf("faulted thread has policy %v after the restore, want SCHED_OTHER", policy)
	}
	if g.find(faulted) >= 0 || g.find(other) < 0 {
		t.Errorf("table after the unwatch: %+v", g.table)
	}
}

// The watchdog rule does not count the time busy CPUs were stopped as the
// thread's time on its CPU: a task whose virtual CPU its host did not run
// for 100 ms, in a stretch of 110 ms without a cycle against a 52.5 ms
// timeout, is not a runaway; with the same CPU time and no stop it is,
// and so it is when the CPU idled meanwhile (its accounts cannot tell a
// stop). Reads of the accounts older than the stretch's start are used,
// the newest of them.
func TestWatchdogDiscountsStoppedCPUs(t *testing.T) {
	const ms = int64(time.Millisecond)
	tick := int64(sys.AccountTick)
	type clock struct{ total, idle, at int64 }
	c := &clock{total: 1000, at: 1000 * ms}
	read := func(into []sys.CPUAccount) ([]sys.CPUAccount, int64, error) {
		return append(into[:0], sys.CPUAccount{CPU: 0, Total: c.total, Idle: c.idle}), c.at, nil
	}
	g := &guard{slots: make([]Slot, 1), accounts: read}
	advance := func(d, stopped int64) {
		c.at += d
		c.total += (d - stopped) / tick
	}
	tickRead := func() { // the guard's tick
		g.readAccounts(&g.reads[g.nreads%stopReads])
		g.nreads++
	}
	for range stopReads + 2 { // ticks before the stretch; the oldest fall out of the ring
		tickRead()
		advance(100*ms, 0)
	}
	g.slots[0].Cycles.Store(7)
	w := &watched{timeout: 52*ms + ms/2}
	require.False(t, g.runaway(w, uint64(5*ms), c.at), "progress: the stretch starts")
	advance(110*ms, 100*ms)
	require.False(t, g.runaway(w, uint64(5*ms+105*ms), c.at), "on its CPU 105 ms, 100 ms of it stopped")
	g.accounts = func([]sys.CPUAccount) ([]sys.CPUAccount, int64, error) { return nil, 0, errors.New("no /proc/stat") }
	require.True(t, g.runaway(w, uint64(5*ms+105*ms), c.at), "the same without the accounts")
	g.accounts = read
	c.idle++
	require.True(t, g.runaway(w, uint64(5*ms+105*ms), c.at), "the same with the CPU idle meanwhile")
	c.idle--

	tickRead()
	g.slots[0].Cycles.Store(8)
	require.False(t, g.runaway(w, uint64(200*ms), c.at), "progress")
	advance(110*ms, 0)
	require.True(t, g.runaway(w, uint64(200*ms+105*ms), c.at), "on its CPU 105 ms, none stopped")
	require.Zero(t, testing.AllocsPerRun(10, func() { g.stoppedSince(c.at - 50*ms) }))
}
