package sim

import "hash/fnv"

// simThread is the virtual thread of one running task, and its
// backend.Waker. Its goroutine calls it only when it has the turn, except
// where marked.
type simThread struct {
	s      *engine
	seq    int32  // start order
	goid   uint64 // its goroutine's id, for Enter
	rank   int    // creation order (engine.setOrder), under mu
	name   string
	prio   int
	period int64
	timer  bool          // emulate a periodic timer (timerfd, POSIX timer)
	turn   chan struct{} // receives the turn

	// Owned by the goroutine with the turn.
	at      int64 // when it is next runnable
	local   int64 // its clock: the start of the current cycle, or its end
	cycles  int64 // completed cycles
	queued  bool
	stopReq bool
	// executing: parked at the end of a cycle on the shared CPU, its end
	// (at) still to be lengthened by preemption.
	executing bool

	// Under mu.
	exited    bool
	rejoined  bool
	suspended bool // paused, off the schedule

	// Owned by the thread's goroutine.
	offClock  bool  // paused: its clock is the simulation's
	stallAt   int64 // a stall drawn while rejoining, for merge to record
	stallBy   int64
	gridNext  int64
	realStart int64

	// The injection plan; SetTask and Inject* change it while idle.
	cost     int64
	realExec bool
	jitter   jitterSource
	stalls   []simFault
	si       int
	overruns []simFault
	oi       int
}

func (th *simThread) applyPlan(p *simTaskState, seed uint64) {
	h := fnv.New64a()
	h.Write([]byte(th.name))
	th.jitter.seed(seed, h.Sum64())
	if p == nil {
		return
	}
	th.cost = int64(p.cfg.Cost)
	th.realExec = p.cfg.RealExec
	th.jitter.set(p.cfg.Jitter)
	th.stalls = append([]simFault(nil), p.stalls...)
	th.overruns = append([]simFault(nil), p.overruns...)
}

// yield puts th back on the run queue at th.at and gives the turn to
// whoever is next; it returns when th has the turn again (at once when it
// is still first).
func (th *simThread) yield() {
	s := th.s
	if len(s.runq) == 0 && !s.pending && !s.stopNow && !s.exclude && th.at <= s.target &&
		(len(s.steps) == 0 || s.steps[0].at > th.at) && !s.dead.Load() {
		// Alone and still due: no one to hand over to. (Progress shows
		// as virtual time moving: the hang check watches both.)
		if th.at > s.now.Load() {
			s.now.Store(th.at)
		}
		return
	}
	th.queued = true
	s.runq = append(s.runq, th)
	next := s.pick()
	if next == th {
		return
	}
	s.handoff(next)
	<-th.turn
}

// Now is the thread's virtual clock.
// RT-safe.
func (th *simThread) Now() int64 {
	if th.offClock {
		return th.s.now.Load()
	}
	return th.local
}

// Arm sets the periodic grid a timer-mode thread wakes on.
func (th *simThread) Arm(first, period int64) error {
	th.gridNext = first
	th.period = period
	return nil
}

// Begin waits for the first cycle's turn.
func (th *simThread) Begin() {
	<-th.turn
	if th.s.dead.Load() {
		return
	}
	th.local = max(th.local, th.at)
	th.realStart = realNow()
	th.s.record(th, Start, 0, th.local, 0)
}

// EndCycle charges the cycle's cost, lets earlier work run, and returns
// the cycle's end.
// RT-safe.
func (th *simThread) EndCycle() int64 {
	s := th.s
	if s.dead.Load() {
		return th.local
	}
	cost := th.cost
	if th.realExec {
		cost = realNow() - th.realStart
	}
	for th.oi < len(th.overruns) && th.overruns[th.oi].cycle <= th.cycles {
		if f := th.overruns[th.oi]; f.cycle == th.cycles {
			extra := f.value
			if extra == 0 {
				extra = th.period
			}
			cost += extra
			s.record(th, Overrun, th.cycles, th.local, extra)
		}
		th.oi++
	}
	if th.period == 0 {
		cost = max(cost, simQuantum)
	}
	start, end := th.local, th.local+cost
	if s.shared {
		s.preempt(th, start, cost)
	} else {
		s.record(th, End, th.cycles, end, cost)
	}
	th.cycles++
	th.local, th.at = end, end
	if s.checking {
		s.check(th)
	}
	th.executing = s.shared
	th.yield()
	th.executing = false
	if s.dead.Load() {
		return end
	}
	if s.shared {
		// Preempted while it ran: it ended later than its cost says.
		end = max(end, th.at)
		s.record(th, End, th.cycles-1, end, end-start)
	}
	th.local = max(th.local, th.at)
	if th.realExec {
		th.realStart = realNow()
	}
	return end
}

// Wait sleeps until the release at deadline (or, in timer mode, the next
// grid point) plus the injected lateness.
// RT-safe.
func (th *simThread) Wait(deadline int64) (int64, uint64, error) {
	s := th.s
	rejoin := th.offClock
	if rejoin {
		th.offClock = false
		th.local = s.now.Load()
	}
	if s.dead.Load() {
		return th.local, 1, errClosed
	}
	expected := deadline
	if th.timer {
		expected = th.gridNext
	}
	wake := th.local
	if expected > th.local {
		wake = expected + th.lateness(expected, rejoin)
	}
	th.at = wake
	if rejoin {
		th.rejoin()
	} else {
		th.yield()
	}
	if s.dead.Load() {
		return th.local, 1, errClosed
	}
	if th.stopReq {
		// Stopped while asleep: return to let WaitPeriod see it.
		th.local = max(th.local, th.at)
		return max(th.local, deadline), 1, nil
	}
	th.local = max(th.local, th.at)
	releases := uint64(1)
	if th.timer && th.period > 0 && th.local >= th.gridNext {
		n := (th.local-th.gridNext)/th.period + 1
		th.gridNext += n * th.period
		releases = uint64(n)
		expected = th.gridNext - th.period
	}
	s.record(th, Wake, th.cycles, th.local, th.local-expected)
	if th.realExec {
		th.realStart = realNow()
	}
	return th.local, releases, nil
}

// lateness draws the coming release's lateness, with any injected stall.
func (th *simThread) lateness(release int64, outside bool) int64 {
	l := th.jitter.sample()
	for th.si < len(th.stalls) && th.stalls[th.si].cycle <= th.cycles {
		if f := th.stalls[th.si]; f.cycle == th.cycles {
			d := f.value * th.period
			l += d
			if outside {
				// Without the turn: merge records it.
				th.stallAt, th.stallBy = release, d
			} else {
				th.s.record(th, Stall, th.cycles, release, d)
			}
		}
		th.si++
	}
	return l
}

// Pausing. A paused task blocks in rtapi, off the schedule (Suspend).
// Resume waits in Kick until it is back among the joins (rejoin), so the
// instant it rejoins at never depends on goroutine timing.

// rejoin puts a resumed thread back in the schedule, for the Resume that
// waits in Kick and owns the queue meanwhile, and waits for its turn.
func (th *simThread) rejoin() {
	s := th.s
	s.mu.Lock()
	th.suspended = false
	th.rejoined = true
	s.joins = append(s.joins, th)
	s.pending = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-th.turn
}

// Suspend takes a pausing task out of the schedule and hands the turn on;
// the task then blocks outside the schedule until Resume.
func (th *simThread) Suspend() error {
	s := th.s
	if th.offClock {
		// Again, from outside: woken by an old Resume's kick, still paused.
		return nil
	}
	th.offClock = true
	s.mu.Lock()
	th.suspended = true
	s.mu.Unlock()
	if s.dead.Load() {
		return nil
	}
	s.record(th, Pause, th.cycles, th.local, 0)
	if s.goal == th {
		s.stopNow, s.lost = true, "was paused"
	}
	s.handoff(s.pick())
	return nil
}

// Rejoin takes a resumed task that is not periodic back into the
// schedule, waiting for its turn; a periodic task's next Wait does that.
func (th *simThread) Rejoin() { _, _, _ = th.Wait(th.Now()) }

// A virtual thread makes no kernel sleeps, and is told
// of Stop and Resume through Kick, not Interrupt.
func (th *simThread) Sleeps() int64 { return 0 }
func (th *simThread) Interrupt()    {}

// Close is called as the task's body has returned.
func (th *simThread) Close() error {
	s := th.s
	s.mu.Lock()
	if th.exited {
		s.mu.Unlock()
		return nil
	}
	th.exited = true
	outside := th.offClock
	s.cond.Broadcast()
	s.mu.Unlock()
	if outside {
		return nil
	}
	if s.dead.Load() {
		// Only the turn's holder gives it back: no stale token is left on back.
		if s.holder.CompareAndSwap(th, nil) {
			s.holder.Store(th)
			s.handoff(nil)
		}
		return nil
	}
	s.record(th, Exit, th.cycles, th.local, 0)
	if s.goal == th {
		s.stopNow, s.lost = true, "ended"
	}
	s.handoff(s.pick())
	return nil
}

// Kick is told that Stop or Resume changed the task's control word, by
// the goroutine that owns the simulation (Enter). For a paused task it
// waits until the task is back (Resume) or has exited (Stop), lending a
// stopped one the simulation; a stop of a scheduled task takes effect at
// the next pick.
func (th *simThread) Kick(stop bool) {
	s := th.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case th.exited:
	case s.dead.Load():
		// Nobody schedules any more: wake it directly.
		select {
		case th.turn <- struct{}{}:
		default:
		}
	case th.suspended:
		running := s.running
		var owner *simThread
		if stop {
			// Its way out runs the body's last code: lend it the turn.
			s.running = true
			owner = s.holder.Swap(th)
		}
		for th.suspended && !th.exited && !s.dead.Load() {
			s.cond.Wait()
		}
		if stop {
			s.running = running
			s.holder.Store(owner)
		}
	case stop:
		s.kicks = append(s.kicks, th)
		s.pending = true
	}
}
