package rtapi

import (
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Now returns CLOCK_MONOTONIC in nanoseconds (rtapi_get_time). It is the
// clock task deadlines are expressed in on the Linux flavors. On the sim
// flavor it is still the real monotonic clock: read virtual time through
// the instance (RT.Now) or the task (TaskContext.Now, Cycle.Now), so that
// code under test does not depend on which simulation is open. It reads
// the vDSO clock, with no system call.
// RT-safe.
func Now() int64 { return sys.Nanotime() }

// DelayMax is the longest busy wait Delay performs (rtapi_delay_max):
// longer waits belong in a sleep, not a spin.
const DelayMax = 10 * time.Microsecond

// Delay busy-waits for d, at most DelayMax (rtapi_delay). It is meant for
// short hardware settle times inside a task body.
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
