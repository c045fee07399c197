package backend

import (
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Registry names of the Linux backends, registered on every system.
const (
	PosixName     = "posix"
	RTPreemptName = "rt-preempt"
)

// Task priorities on the Linux backends: LinuxCNC's uspace range, below
// the watchdog's (fifoHighest lowers it under RLIMIT_RTPRIO).
const (
	prioLowest  = sys.FIFOPrioMin
	prioHighest = sys.FIFOPrioMax - 1
)

// MinPeriod is the shortest period the Linux backends accept.
const MinPeriod = 10 * time.Microsecond
