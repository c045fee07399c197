package rtapi

import (
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Now returns CLOCK_MONOTONIC in nanoseconds from the vDSO
// (rtapi_get_time), also on the sim flavor: virtual time is RT.Now or
// TaskContext.Now.
// RT-safe.
func Now() int64 { return sys.Nanotime() }

// DelayMax is the longest busy wait Delay performs (rtapi_delay_max):
// longer waits belong in a sleep, not a spin.
const DelayMax = 10 * time.Microsecond

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
