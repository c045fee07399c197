package rttest

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"
	"time"
)

// WaitTimeout bounds WaitFor. It is long on purpose: WaitFor awaits a state
// that must come, so only a broken program reaches it, and a loaded CI
// machine must never fail a test by being slow.
const WaitTimeout = 30 * time.Second

// WaitFor polls cond, off any real-time path, until it returns true, and
// fails t with what (the state awaited, e.g. "task loop: 100 cycles") if
// it has not after WaitTimeout. Tests use it instead of a sleep whenever
// they wait for another goroutine, thread or process to reach a state.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; it never came", WaitTimeout, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond) // cond may be costly (a child process)
	}
}

// Rounds returns n, or n/10 (at least 1) under go test -short: a stress
// or race test's iteration count. The unit lane still takes every path
// the test takes; the full lane runs it n times.
func Rounds(n int) int {
	if testing.Short() {
		return max(n/10, 1)
	}
	return n
}

// Open calls open and fails t on its error; the value is closed when t
// ends, and a failing Close fails t. It is every package's open-the-RT
// helper (rttest cannot import rtapi, so open is a func):
//
//	rt := rttest.Open(t, func() (*rtapi.RT, error) { return rtapi.Open(o) })
func Open[T io.Closer](t testing.TB, open func() (T, error)) T {
	t.Helper()
	v, err := open()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := v.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return v
}

// SettleAllThreads calls apply on every thread of this process, again and
// again, until one pass finds none that apply had to change: a thread may be
// started, from one not yet changed, while a pass runs. apply returns
// whether it changed (or tried to change) tid; a thread that has exited
// meanwhile is apply's to ignore (return false).
func SettleAllThreads(t testing.TB, apply func(tid int) (changed bool)) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatalf("list threads: %v", err)
		}
		changed := false
		for _, e := range tasks {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				t.Fatalf("thread id %q: %v", e.Name(), err)
			}
			if apply(tid) {
				changed = true
			}
		}
		if !changed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads still changing after %v", WaitTimeout)
		}
	}
}

// Asleep reports whether thread tid of this process is in an interruptible
// sleep (state S in /proc/self/task/<tid>/stat): a task thread parked in
// its period's wait, for instance. A thread that is gone is not asleep.
func Asleep(tid int) bool {
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'S'
}

// WhenAsleep runs wake on a new goroutine once thread tid is asleep
// (Asleep), so that wake interrupts a sleep rather than landing before it.
// tid is typically the test's own thread, locked, about to sleep. Should
// tid not be seen asleep within WaitTimeout, WhenAsleep says so with
// t.Errorf (safe off the test goroutine) and runs wake all the same, so the
// sleeper is never left asleep.
func WhenAsleep(t testing.TB, tid int, wake func()) {
	go func() {
		deadline := time.Now().Add(WaitTimeout)
		for !Asleep(tid) {
			if time.Now().After(deadline) {
				t.Errorf("thread %d never slept in %v", tid, WaitTimeout)
				break
			}
			time.Sleep(time.Millisecond)
		}
		wake()
	}()
}
