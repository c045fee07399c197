package main

import (
	"fmt"
	"io"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// writeScheduling says how each HAL thread really runs: the "prio" of the
// thread table is the HAL's rank, which only a real-time policy applies.
func writeScheduling(w io.Writer, h *hal.HAL) {
	for _, th := range h.Threads() {
		s := th.Task().Stats()
		switch {
		case s.Policy == "SCHED_FIFO":
			fmt.Fprintf(w, "halhost: thread %s runs SCHED_FIFO priority %d\n", th.Name(), s.Priority)
		default:
			fmt.Fprintf(w, "halhost: thread %s runs %s (not real-time; its HAL priority %d is not applied)\n", th.Name(), s.Policy, th.Stats().Priority)
		}
	}
}

// writeLatency prints each thread's wake-up latency over the run, as
// latency-test does: its max (exact), its p99.9 and how many wake-ups
// passed the histogram's bound.
func writeLatency(w io.Writer, h *hal.HAL) {
	for _, th := range h.Threads() {
		task := th.Task()
		if task == nil {
			continue
		}
		l := task.Stats().Latency
		p999, _ := l.Quantile(0.999)
		fmt.Fprintf(w, "halhost: thread %s wake-up latency: max %v, p99.9 %v, %d wake-ups (%d past %v)\n",
			th.Name(), l.Max, p999, l.Count, l.Overflow, l.Bound())
	}
}
