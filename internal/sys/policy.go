package sys

import (
	"fmt"
	"sync/atomic"
)

// Policy is a Linux scheduling policy, by Linux's numbers on every system.
type Policy uint32

// The policies gortapi uses, and the others String names.
const (
	SchedOther    Policy = 0 // SCHED_NORMAL
	SchedFIFO     Policy = 1
	SchedRR       Policy = 2
	schedBatch    Policy = 3
	SchedIdle     Policy = 5 // runs only when nothing else would
	schedDeadline Policy = 6
)

func (p Policy) String() string {
	switch p {
	case SchedOther:
		return "SCHED_OTHER"
	case SchedFIFO:
		return "SCHED_FIFO"
	case SchedRR:
		return "SCHED_RR"
	case schedBatch:
		return "SCHED_BATCH"
	case SchedIdle:
		return "SCHED_IDLE"
	case schedDeadline:
		return "SCHED_DEADLINE"
	}
	return fmt.Sprintf("policy(%d)", uint32(p))
}

// FIFO priority bounds, as sched_get_priority_min/max report them on Linux.
const (
	FIFOPrioMin = 1
	FIFOPrioMax = 99
)

var denyRealTime atomic.Bool

// DenyRealTime makes SetScheduler refuse SCHED_FIFO and SCHED_RR with
// EPERM from now on, as without CAP_SYS_NICE. rttest.Main calls it under
// go test -short.
func DenyRealTime() { denyRealTime.Store(true) }
