package hal

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/gortapi/gortapi/rtapi"
)

// The per-cycle path of a thread: no allocation, lock or log. Counters
// have one writer (this thread), so they are bumped with a load and a
// store, not a locked add.

// body is the rtapi task body of a thread. A panicking function ends the
// thread with a *PanicError, runtime.Goexit with the task's ErrGoexit;
// either way the thread is "failed". A truncated segment does not end it
// (see run). Once the safe states have run, no function is called again
// (HACKING.md, "Safe states are the last word").
func (th *Thread) body(tc *rtapi.TaskContext) error {
	// A SIGBUS past a truncated file's end becomes a panic, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	th.beginRun()
	defer th.endRun() // also on runtime.Goexit; before the line above's
	th.state.Store(stateRunning)
	th.nextPublish = th.beat.Load()
	th.fc.tc = tc
	for resume := false; ; resume = true {
		if done, err := th.run(tc, resume); done {
			return err
		}
	}
}

// run runs cycles until the thread ends (done), or until an access into
// a segment another process truncated faults. The segment is then lost
// (publisher.lost, dataStore.lost) and run returns to be called again with
// resume, which finishes the interrupted cycle. Returning to recover
// keeps a later panic of a function recoverable.
func (th *Thread) run(tc *rtapi.TaskContext, resume bool) (done bool, err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover()
		switch {
		case v == nil:
			th.ended() // runtime.Goexit: the task reports it
		case th.h.pub.lost(v), th.h.data.lost(v):
			// done stays false: resume
		default:
			err, done = th.panicked(v), true
		}
	}()
	if resume {
		th.resume(tc)
	}
	for {
		if resume && !tc.WaitPeriod() {
			state := stateStopped
			if tc.Faulted() {
				state = stateFailed // the deadline policy: rtapi reports it
			}
			th.publishIdle(state)
			returned = true
			return true, nil
		}
		resume = true
		th.cycle(tc)
	}
}

// cycle runs the chain once.
func (th *Thread) cycle(tc *rtapi.TaskContext) {
	th.h.enterCycle() // a change of links applies before the chain, whole
	th.inCycle = true
	c := th.pin()
	start := tc.Now()
	th.fc.start = start
	th.complete(tc, c, c.functs, start)
}

// complete calls fs, the rest of chain c, from t0 and accounts for the cycle.
func (th *Thread) complete(tc *rtapi.TaskContext, c *chain, fs []*Funct, t0 int64) {
	start := th.fc.start
	due := tc.Deadline() // the next release
	for _, f := range fs {
		if th.overtaken.Load() || tc.Faulted() {
			break // faulted, or the safe states ran: they have the last word
		}
		th.current = f
		if f.cfn != nil {
			f.cfn(&th.fc)
		} else {
			f.fn(th.period, start)
		}
		t1 := tc.Now()
		f.account(t1-t0, overran(t0, t1, due, th.periodNs))
		t0 = t1
	}
	th.current = nil
	th.inUse.Store(0)
	th.inCycle = false
	th.h.leaveCycle()

	total := t0 - start
	th.time.Store(total)
	if th.times.record(total) || total > th.tmax.Load() {
		th.tmax.Store(total) // follows .tmax down after a setp
	}
	if t0 > due {
		th.overruns.Store(th.overruns.Load() + 1)
	}
	beat := th.beat.Load() + 1
	th.beat.Store(beat)
	th.times.beat.Set(beat)
	if th.seq != nil && beat >= th.nextPublish {
		th.nextPublish = beat + th.publishEvery
		th.publish(c, stateRunning)
	}
}

// resume finishes the cycle a fault in a lost segment interrupted: the
// chain goes on after th.current, whose call (ended by its own pin
// access, or already returned) goes unaccounted. A fault after the chain
// was in publishing, the last step. If the chain was replaced meanwhile,
// the rest of the cycle is skipped.
func (th *Thread) resume(tc *rtapi.TaskContext) {
	if !th.inCycle {
		return
	}
	c := th.chain.Load()
	if c.gen == th.inUse.Load() {
		for i, f := range c.functs {
			if f == th.current {
				th.complete(tc, c, c.functs[i+1:], tc.Now())
				return
			}
		}
	}
	th.current = nil
	th.inUse.Store(0)
	th.inCycle = false
	th.h.leaveCycle()
}

// pin loads the current chain and marks its generation in use (waitPast).
func (th *Thread) pin() *chain {
	for {
		c := th.chain.Load()
		th.inUse.Store(c.gen)
		if th.chain.Load() == c {
			return c
		}
	}
}

// overran says whether a call from t0 to t1 made the thread miss the
// release at due: it ended after due and began before it or alone lasted
// longer than a period.
func overran(t0, t1, due, period int64) bool {
	return t1 > due && (t0 <= due || t1-t0 > period)
}

// account records a call of f that took d ns in its counters and its
// .time, .tmax and .tmax-increased.
func (f *Funct) account(d int64, overran bool) {
	s := f.slot
	atomic.StoreInt64(&s.Time, d)
	raised := f.times.record(d)
	f.times.setIncreased(raised)
	if raised || d > atomic.LoadInt64(&s.TMax) {
		atomic.StoreInt64(&s.TMax, d) // follows .tmax down after a setp
	}
	atomic.StoreInt64(&s.Calls, atomic.LoadInt64(&s.Calls)+1)
	if overran {
		atomic.StoreInt64(&s.Overruns, atomic.LoadInt64(&s.Overruns)+1)
	}
}

// ended marks a thread a function ended (panic, Goexit) as failed.
func (th *Thread) ended() {
	th.current = nil
	th.inUse.Store(0)
	if th.inCycle {
		th.inCycle = false
		th.h.leaveCycle()
	}
	th.publishIdle(stateFailed)
}

// panicked turns a function's panic into the thread's error; it allocates.
func (th *Thread) panicked(v any) error {
	name := "(none: the panic was outside any function)"
	if th.current != nil {
		name = th.current.name
	}
	th.ended()
	return &PanicError{Thread: th.name, Funct: name, Value: v, Stack: debug.Stack()}
}
