package rttest

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"
	"time"
)

// WaitTimeout bounds WaitFor; long, so that only a broken program reaches it.
const WaitTimeout = 30 * time.Second

// WaitFor polls cond until it returns true, failing t with what (the state
// awaited) after WaitTimeout. Tests use it instead of sleeps.
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

// Rounds returns a stress test's iteration count: n, or n/10 (at least 1)
// under go test -short.
func Rounds(n int) int {
	if testing.Short() {
		return max(n/10, 1)
	}
	return n
}

// Open calls open, failing t on its error, and closes the value when t
// ends (a failing Close fails t):
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

// SettleAllThreads calls apply on every thread of this process in passes
// until one changes none (threads may start during a pass). apply reports
// whether it changed tid, false for a thread that has exited.
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

// Asleep reports whether thread tid of this process is in state S
// (interruptible sleep); a thread that is gone is not.
func Asleep(tid int) bool {
	stat, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'S'
}

// WhenAsleep runs wake on a new goroutine once thread tid is Asleep, so
// that wake interrupts the sleep. After WaitTimeout it calls t.Errorf and
// runs wake all the same.
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
