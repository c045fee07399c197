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

// ResetOnFork (SCHED_RESET_ON_FORK), or'ed into a policy given to
// sched_setscheduler, makes the processes and threads the thread then
// makes start SCHED_OTHER at nice 0: a real-time policy stays the
// thread's own. Only CAP_SYS_NICE may clear it again, so a thread that
// has it must keep it in every later change (SetScheduler always sets
// it). Scheduler reports the policy without it.
const ResetOnFork Policy = 0x40000000

var policyNames = [...]string{SchedOther: "SCHED_OTHER", SchedFIFO: "SCHED_FIFO", SchedRR: "SCHED_RR",
	schedBatch: "SCHED_BATCH", SchedIdle: "SCHED_IDLE", schedDeadline: "SCHED_DEADLINE"}

func (p Policy) String() string {
	if p < Policy(len(policyNames)) && policyNames[p] != "" {
		return policyNames[p]
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
