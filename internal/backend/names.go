package backend

import (
	"time"

	"github.com/gortapi/gortapi/internal/sys"
)

// Registry names of the Linux backends. They are registered on every
// system, so that asking for one elsewhere says why it cannot run.
const (
	PosixName     = "posix"
	RTPreemptName = "rt-preempt"
)

// Task priorities on the Linux backends: LinuxCNC's uspace range, one
// below the kernel's maximum so that a watchdog can sit above every task.
// Where RLIMIT_RTPRIO allows less, a SCHED_FIFO flavor's Priorities stop
// one below the limit instead.
const (
	prioLowest  = sys.FIFOPrioMin
	prioHighest = sys.FIFOPrioMax - 1
)

// MinPeriod is the shortest period the Linux backends accept. Shorter
// periods cannot be met by any Linux thread wake-up path.
const MinPeriod = 10 * time.Microsecond
