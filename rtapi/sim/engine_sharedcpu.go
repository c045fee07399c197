package sim

// SharedCPU: all tasks on one simulated CPU, scheduled like SCHED_FIFO.
// A thread that ended a cycle stays "executing" on the run queue until its
// end (at), which higher priorities push back by their cost.

// cpuBusy delays a release while a task of higher or equal priority is
// executing on the shared CPU, and reports whether it did.
func (s *engine) cpuBusy(th *simThread) bool {
	busy := th.at
	for _, o := range s.runq {
		if o.executing && o.prio >= th.prio && o.at > busy {
			busy = o.at
		}
	}
	if busy == th.at {
		return false
	}
	th.at = busy
	return true
}

// preempt lengthens the cycles of lower-priority tasks executing when th
// started its cycle at start, by th's cost.
func (s *engine) preempt(th *simThread, start, cost int64) {
	for _, o := range s.runq {
		if o.executing && o.prio < th.prio && o.at > start {
			o.at += cost
		}
	}
}
