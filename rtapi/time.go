package rtapi

import (
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// MonotonicNow returns CLOCK_MONOTONIC in nanoseconds from the vDSO,
// whatever the flavor: a task's time (rtapi_get_time), virtual on the sim
// flavor, is RT.Now or TaskContext.Now.
// RT-safe.
func MonotonicNow() int64 { return sys.Nanotime() }

// Delay busy-waits for d, at most DelayMax (rtapi_delay): for short
// hardware settle times in a task body.
// RT-safe.
func Delay(d time.Duration) {
	d = min(d, DelayMax)
	if d <= 0 {
		return
	}
	end := sys.Nanotime() + int64(d)
	for sys.Nanotime() < end {
	}
}
