package main

import (
	"fmt"
	"io"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hist"
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
		if task := th.Task(); task != nil {
			writeLatencyLine(w, "halhost: thread "+th.Name(), task.Stats().Latency)
		}
	}
}

func writeLatencyLine(w io.Writer, prefix string, l hist.Snapshot) {
	p999, _ := l.Quantile(0.999)
	fmt.Fprintf(w, "%s wake-up latency: max %v, p99.9 %v, %d wake-ups (%d past %v)\n",
		prefix, l.Max, p999, l.Count, l.Overflow, l.Bound())
}

// marks are the windows SIGUSR1 cuts: each mark prints every thread's
// wake-up latency since the one before (the start for the first), so a
// benchmark measures from after what it set up to before it tears down.
type marks struct {
	n    int
	last map[string]rtapi.Stats // by thread, at the previous mark; none: the start
}

// mark prints the window that ends now and starts the next.
func (m *marks) mark(w io.Writer, h *hal.HAL) {
	m.n++
	next := map[string]rtapi.Stats{}
	for _, th := range h.Threads() {
		task := th.Task()
		if task == nil {
			continue
		}
		now := task.Stats()
		next[th.Name()] = now
		win := now
		if prev, ok := m.last[th.Name()]; ok {
			var err error
			if win, err = now.Since(prev); err != nil {
				fmt.Fprintf(w, "halhost: mark %d: thread %s: %v\n", m.n, th.Name(), err)
				continue
			}
		}
		writeLatencyLine(w, fmt.Sprintf("halhost: mark %d: thread %s", m.n, th.Name()), win.Latency)
	}
	m.last = next
}
