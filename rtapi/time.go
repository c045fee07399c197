package rtapi

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gortapi/gortapi/flavors"
	"github.com/gortapi/gortapi/internal/sys"
)

// Now returns the monotonic time in nanoseconds (rtapi_get_time): the
// clock task deadlines are expressed in. While an RT instance with a
// virtual clock (the sim flavor) is open, Now returns that instance's
// virtual time, so that code written against the package-level clock is
// testable on sim; with several such instances, the latest opened wins.
//
// RT-safe: no allocation, no system call (vDSO).
func Now() int64 {
	if c := virtualClock.Load(); c != nil {
		return c.flavor.Now()
	}
	return sys.Nanotime()
}

// DelayMax is the longest busy wait Delay performs (rtapi_delay_max):
// longer waits belong in a sleep, not a spin.
const DelayMax = 10 * time.Microsecond

// Delay busy-waits for d, at most DelayMax (rtapi_delay). It is meant for
// short hardware settle times inside a task body. RT-safe.
func Delay(d time.Duration) {
	d = min(d, DelayMax)
	if d <= 0 {
		return
	}
	end := sys.Nanotime() + int64(d)
	for sys.Nanotime() < end {
	}
}

type clockRef struct {
	flavor flavors.Flavor
	prev   *clockRef
}

var (
	clockMu      sync.Mutex
	virtualClock atomic.Pointer[clockRef]
)

func pushClock(f flavors.Flavor) *clockRef {
	clockMu.Lock()
	defer clockMu.Unlock()
	c := &clockRef{flavor: f, prev: virtualClock.Load()}
	virtualClock.Store(c)
	return c
}

// popClock removes c from the stack of virtual clocks, wherever it is.
func popClock(c *clockRef) {
	if c == nil {
		return
	}
	clockMu.Lock()
	defer clockMu.Unlock()
	top := virtualClock.Load()
	if top == c {
		virtualClock.Store(c.prev)
		return
	}
	for r := top; r != nil; r = r.prev {
		if r.prev == c {
			r.prev = c.prev
			return
		}
	}
}
