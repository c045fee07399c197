package sim

import (
	"slices"
	"time"
)

// The scheduler: what the goroutine with the turn, which owns the run
// queue, the clock and the trace, does at a scheduling point: merge,
// pick, handoff.

// pick takes the next thread off the run queue, or returns nil when the
// run must stop (target reached, condition met, nothing runnable, dead).
func (s *engine) pick() *simThread {
	if s.dead.Load() {
		return nil
	}
	if s.pending {
		s.merge()
	}
	if s.stopNow {
		return nil
	}
	for {
		bi := -1
		for i, th := range s.runq {
			if s.exclude && !th.stopReq {
				continue
			}
			if bi < 0 || th.before(s.runq[bi]) {
				bi = i
			}
		}
		if bi < 0 {
			return nil
		}
		best := s.runq[bi]
		if !s.exclude {
			if len(s.steps) > 0 && s.steps[0].at <= best.at && s.steps[0].at <= s.target {
				s.applyStep()
				continue
			}
			if s.shared && !best.executing && s.cpuBusy(best) {
				continue // best.at moved to when the CPU is free for it
			}
			if best.at > s.target {
				return nil
			}
		}
		last := len(s.runq) - 1
		s.runq[bi] = s.runq[last]
		s.runq[last] = nil
		s.runq = s.runq[:last]
		best.queued = false
		if best.at > s.now.Load() {
			s.now.Store(best.at)
		}
		return best
	}
}

// before orders runnable threads by instant, priority, creation, start.
func (th *simThread) before(o *simThread) bool {
	if th.at != o.at {
		return th.at < o.at
	}
	if th.prio != o.prio {
		return th.prio > o.prio
	}
	if th.rank != o.rank {
		return th.rank < o.rank
	}
	return th.seq < o.seq
}

// merge takes in the threads started or resumed since the last pick, in
// start order, and the stops made since, so the trace records them at a
// scheduling point.
func (s *engine) merge() {
	s.pending = false
	now := s.now.Load()
	if len(s.joins) > 0 {
		s.mu.Lock()
		s.rerank()
		s.mu.Unlock()
		slices.SortFunc(s.joins, func(a, b *simThread) int { return int(a.seq - b.seq) })
	}
	for _, th := range s.joins {
		if th.rejoined {
			th.rejoined = false
			s.record(th, Resume, th.cycles, now, 0)
			if th.stallBy != 0 {
				s.record(th, Stall, th.cycles, th.stallAt, th.stallBy)
				th.stallBy = 0
			}
		}
		th.queued = true
		s.runq = append(s.runq, th)
	}
	clear(s.joins)
	s.joins = s.joins[:0]
	for _, th := range s.kicks {
		if th.exited {
			continue
		}
		th.stopReq = true
		if th.queued && th.at > now {
			th.at = now
		}
	}
	clear(s.kicks)
	s.kicks = s.kicks[:0]
}

// rerank gives every live thread its place in creation order. Under mu.
func (s *engine) rerank() {
	if s.order == nil {
		return
	}
	names := s.order()
	for _, th := range s.threads {
		if th.exited {
			continue
		}
		th.rank = len(names) + int(th.seq) // not a task any more: last
		for i, n := range names {
			if n == th.name {
				th.rank = i
				break
			}
		}
	}
}

// applyStep makes the first pending clock step happen.
func (s *engine) applyStep() {
	st := s.steps[0]
	s.steps = s.steps[1:]
	end := st.at + st.by
	for _, th := range s.runq {
		if th.at >= st.at && th.at < end {
			th.at = end
		}
	}
	if end > s.now.Load() {
		s.now.Store(end)
	}
	s.record(nil, ClockStep, 0, st.at, st.by)
}

// check stops the run when its condition holds.
func (s *engine) check(th *simThread) {
	if s.goal != nil && s.goal == th && th.cycles >= s.goalN {
		s.stopNow = true
	}
	if s.pred != nil && s.pred() {
		s.stopNow = true
	}
}

// handoff gives the turn to next, or (nil) back to the controller.
func (s *engine) handoff(next *simThread) {
	s.progress.Store(s.progress.Load() + 1) // the hang check watches hand-offs and the clock
	s.holder.Store(next)
	if next != nil {
		next.turn <- struct{}{}
		return
	}
	select {
	case s.back <- struct{}{}:
	default: // a controller that gave up on a hung task left a token
	}
}

// record folds a trace event into the digest and keeps it in the ring.
// RT-safe.
func (s *engine) record(th *simThread, kind EventKind, cycle, t, v int64) {
	thread := int32(-1)
	if th != nil {
		thread = th.seq
	}
	h := s.digest ^ uint64(uint32(thread))<<8 ^ uint64(kind)
	h = (h ^ uint64(cycle)) * 0x100000001b3
	h = (h ^ uint64(t)) * 0x100000001b3
	h = (h ^ uint64(v)) * 0x100000001b3
	s.digest = h*0x9e3779b97f4a7c15 + 1
	if s.ring != nil {
		var task string
		if th != nil {
			task = th.name
		}
		s.ring[s.count&uint64(len(s.ring)-1)] = Event{Task: task, Kind: kind, Cycle: cycle, Time: t, Value: time.Duration(v)}
	}
	s.count++
}
