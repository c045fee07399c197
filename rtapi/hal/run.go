package hal

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/gortapi/gortapi/rtapi"
)

// The per-cycle path of a thread: no allocation, lock or log. A
// function's counters are plain fields of the thread that calls it
// (Funct.acct), published into its stats slot once per publication
// (Options.PublishEvery) and as the run ends; its HAL pins and
// parameters (.time, .tmax, .tmax-increased) are written after each
// call, as LinuxCNC does. The thread's own counters have one writer, so
// they are bumped with a load and a store, not a locked add.

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
	th.at = -1
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
			th.flush()
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
	th.cur = c // once a cycle: a pointer store may cost a write barrier
	start := tc.Now()
	th.fc.start = start
	th.complete(tc, c, 0, start)
}

// complete calls the functions of chain c from index from on, the
// first from t0, and accounts for the cycle. Per call: the function, one
// clock read (its end is the next one's start) and account.
func (th *Thread) complete(tc *rtapi.TaskContext, c *chain, from int, t0 int64) {
	start := th.fc.start
	due := tc.Deadline() // the next release
	th.due = due
	fs := c.functs
	for i := from; i < len(fs); i++ {
		if th.overtaken.Load() || tc.Faulted() {
			break // faulted, or the safe states ran: they have the last word
		}
		f := fs[i]
		th.at = i // an int: no write barrier per call
		if f.cfn != nil {
			f.cfn(&th.fc)
		} else {
			f.fn(th.period, start)
		}
		t1 := tc.Now()
		f.account(t1-t0, overran(t0, t1, due, th.periodNs))
		t0 = t1
	}
	th.at = -1
	th.end = t0
	th.finish(c)
}

// finish ends the cycle of chain c, whose last call ended at th.end: it
// publishes the functions' counters when a publication is due, while c
// is still in use (RemoveFunct waits for that), then releases c and
// accounts for the cycle. Run again after a fault in the stats segment
// (resume), it redoes only idempotent work.
func (th *Thread) finish(c *chain) {
	th.finishing = true
	beat := th.beat.Load() + 1
	publishing := beat >= th.nextPublish
	if publishing {
		for _, f := range c.functs {
			f.publishAcct()
		}
	}
	th.finishing = false
	th.inUse.Store(0)
	th.inCycle = false
	th.h.leaveCycle()

	total := th.end - th.fc.start
	th.time.Store(total)
	if th.times.record(total) || total > th.tmax.Load() {
		th.tmax.Store(total) // follows .tmax down after a setp
	}
	if th.end > th.due {
		th.overruns.Store(th.overruns.Load() + 1)
	}
	th.beat.Store(beat)
	th.times.beat.Set(beat)
	if publishing {
		th.nextPublish = beat + th.publishEvery
		if th.seq != nil {
			th.publish(c, stateRunning)
		}
	}
}

// resume finishes the cycle a fault in a lost segment interrupted: the
// chain goes on after the function at th.at, whose call (ended by its own pin
// access, or already returned) goes unaccounted, or finish runs again
// when the fault was in its publication. A fault after the chain was
// released was in the cycle's accounting, the last step. If the chain
// was replaced meanwhile, the rest of the cycle is skipped.
func (th *Thread) resume(tc *rtapi.TaskContext) {
	if !th.inCycle {
		return
	}
	c := th.chain.Load()
	if c.gen == th.inUse.Load() && c == th.cur {
		if th.finishing {
			th.finish(c)
			return
		}
		if th.at >= 0 {
			th.complete(tc, c, th.at+1, tc.Now())
			return
		}
	}
	th.at = -1
	th.finishing = false
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

// flush publishes the counters of the functions of the thread's chain
// (pinned meanwhile) as its run ends, so that Stats is exact once the
// thread stopped. It allocates (a guard against truncation); not for
// the per-cycle path.
func (th *Thread) flush() {
	c := th.pin()
	th.h.pub.access(func() {
		for _, f := range c.functs {
			f.publishAcct()
		}
	})
	th.inUse.Store(0)
}

// overran says whether a call from t0 to t1 made the thread miss the
// release at due: it ended after due and began before it or alone lasted
// longer than a period.
func overran(t0, t1, due, period int64) bool {
	return t1 > due && (t0 <= due || t1-t0 > period)
}

// account records a call of f that took d ns: its .time, .tmax and
// .tmax-increased in the HAL at once, as LinuxCNC's thread_task does,
// and its counters in f.acct, which only the calling thread touches
// (plain stores; publishAcct publishes them).
// RT-safe.
func (f *Funct) account(d int64, overran bool) {
	a := &f.acct
	a.sawResets(f)
	a.time = d
	a.calls++
	if overran {
		a.overruns++
	}
	raised := f.times.record(d)
	f.times.setIncreased(raised)
	if raised || d > a.tmax {
		a.tmax = d // follows .tmax down after a setp
	}
}

// publishAcct copies f.acct into f's stats slot, storing only the
// counters that changed. It runs on the thread whose chain holds f, or
// under h.mu once no thread can call f (RemoveFunct).
// RT-safe.
func (f *Funct) publishAcct() {
	s, a := f.slot, &f.acct
	a.sawResets(f)
	storeChanged(&s.Time, a.time)
	storeChanged(&s.TMax, a.tmax)
	storeChanged(&s.Calls, a.calls)
	storeChanged(&s.Overruns, a.overruns)
}

// sawResets zeroes a's worst time if f's ResetMax ran since it last looked.
// RT-safe.
func (a *functAcct) sawResets(f *Funct) {
	if r := f.resets.Load(); r != a.resets {
		a.resets, a.tmax = r, 0
	}
}

// storeChanged stores v at p unless p holds it: an atomic load is a
// plain load where an atomic store is a locked exchange (amd64).
// RT-safe.
func storeChanged(p *int64, v int64) {
	if atomic.LoadInt64(p) != v {
		atomic.StoreInt64(p, v)
	}
}

// ended marks a thread a function ended (panic, Goexit) as failed.
func (th *Thread) ended() {
	th.at = -1
	th.finishing = false
	th.flush()
	if th.inCycle {
		th.inCycle = false
		th.h.leaveCycle()
	}
	th.publishIdle(stateFailed)
}

// panicked turns a function's panic into the thread's error; it allocates.
func (th *Thread) panicked(v any) error {
	name := "(none: the panic was outside any function)"
	if th.at >= 0 {
		name = th.cur.functs[th.at].name
	}
	th.ended()
	return &PanicError{Thread: th.name, Funct: name, Value: v, Stack: debug.Stack()}
}
