//go:build linux

package rttest

import (
	"errors"
	"image"
	"image/color"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWaitForAwaitsAnotherGoroutine(t *testing.T) {
	var ready atomic.Bool
	go ready.Store(true)
	WaitFor(t, "the goroutine", ready.Load)
	if !ready.Load() {
		t.Fatal("WaitFor returned before the state")
	}
}

type closer struct{ closed, fail bool }

func (c *closer) Close() error {
	c.closed = true
	if c.fail {
		return errors.New("refused")
	}
	return nil
}

func TestOpenClosesWhenTheTestEnds(t *testing.T) {
	c := &closer{}
	t.Run("user", func(t *testing.T) {
		if got := Open(t, func() (*closer, error) { return c, nil }); got != c || c.closed {
			t.Fatalf("Open gave %p (closed %v), want %p open", got, c.closed, c)
		}
	})
	if !c.closed {
		t.Fatal("not closed when the test ended")
	}
}

// A thread blocked (here on a channel, in a futex) is asleep; a running one,
// or one that does not exist, is not.
func TestAsleepAndWhenAsleep(t *testing.T) {
	// Locked first: an unlocked goroutine may move to another thread
	// while it reads /proc, leaving the tid it asked about asleep.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if Asleep(unix.Gettid()) {
		t.Fatal("the running thread reads as asleep")
	}
	if Asleep(-1) {
		t.Fatal("no thread -1, yet it reads as asleep")
	}
	woken := make(chan struct{})
	var wokeAsleep atomic.Bool
	tid := unix.Gettid()
	WhenAsleep(t, tid, func() {
		wokeAsleep.Store(Asleep(tid))
		close(woken)
	})
	<-woken // this locked thread sleeps until WhenAsleep sees it
	if !wokeAsleep.Load() {
		t.Fatal("wake ran while the thread was not asleep")
	}
}

func TestSettleAllThreadsRepeatsUntilNothingChanges(t *testing.T) {
	seen := map[int]int{}
	SettleAllThreads(t, func(tid int) bool {
		seen[tid]++
		return seen[tid] == 1 // each thread needs one change
	})
	if len(seen) == 0 || seen[unix.Gettid()] < 2 {
		t.Fatalf("passes per thread %v: want every thread changed, then one pass that changes none", seen)
	}
}

// InkBox bounds the opaque pixels, and says false for none.
func TestInkBox(t *testing.T) {
	t.Parallel()
	img := image.NewNRGBA(image.Rect(0, 0, 10, 10))
	if _, ok := InkBox(img); ok {
		t.Fatal("a transparent image has ink")
	}
	img.Set(2, 3, color.NRGBA{A: 255})
	img.Set(7, 5, color.NRGBA{A: 255})
	img.Set(8, 8, color.NRGBA{A: 0x10}) // too faint
	if box, ok := InkBox(img); !ok || box != image.Rect(2, 3, 8, 6) {
		t.Fatalf("InkBox = %v, %v; want (2,3)-(8,6), true", box, ok)
	}
}
