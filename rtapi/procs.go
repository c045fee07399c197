package rtapi

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// Spare Ps (Options.SpareProcs): GOMAXPROCS is raised by one for each
// task, so that a task thread waking from its sleep finds an idle P
// instead of waiting for a SCHED_OTHER thread of the runtime to hand it
// one. docs/GC.md ("Spare Ps") has the mechanism and the measurements.
//
// Setting GOMAXPROCS stops the world, and a stop waits for every P,
// including one held by an ordinary thread that CPU hogs keep off the
// CPU: a running task waking into it waits as long. So GOMAXPROCS changes
// only while none of the counted tasks runs, where the program allows:
// the first Start of a set counts every task of its RT not yet started,
// and an ending task's P is given back only once the last counted task
// has ended. A task started while others run, beyond what was counted,
// still raises it.

// procBoard counts the tasks holding a spare P. There is one for the
// process (spareProcs), since GOMAXPROCS is the process's, shared by every
// RT. A task's spare field is guarded by mu.
type procBoard struct {
	mu     sync.Mutex
	procs  func(int) int       // runtime.GOMAXPROCS
	getenv func(string) string // os.Getenv
	base   int                 // GOMAXPROCS before the first spare P
	n      int                 // tasks counted and not ended
	set    int                 // GOMAXPROCS as the board last left it
	// foreign: GOMAXPROCS was changed behind the board, which leaves it
	// alone until every counted task has ended.
	foreign bool
}

var spareProcs = procBoard{procs: runtime.GOMAXPROCS, getenv: os.Getenv}

// add counts each task of ts not yet counted and not yet started or
// ended, and raises GOMAXPROCS to one P more than before the first for
// each task counted, if it is below that. It returns why GOMAXPROCS was
// left alone, or "".
func (b *procBoard) add(ts []*Task) (note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v := b.getenv("GOMAXPROCS"); v != "" {
		return "GOMAXPROCS=" + v + " in the environment is left alone"
	}
	cur := b.procs(0)
	if b.n == 0 {
		b.base, b.set, b.foreign = cur, cur, false
	} else if cur != b.set {
		b.foreign = true
	}
	for _, t := range ts {
		// The state is read under mu: a Stop of a task not started sets
		// it before it gives back (remove), so a task is counted only
		// if its remove is still to come.
		if !t.spare && t.state.Load() == stateCreated {
			t.spare = true
			b.n++
		}
	}
	if b.foreign {
		return fmt.Sprintf("GOMAXPROCS was changed to %d by the program and is left alone", cur)
	}
	if want := b.base + b.n; want > cur {
		b.procs(want)
		b.set = want
	}
	return ""
}

// remove uncounts t if add counted it, and gives the spare Ps back once
// no counted task is left.
func (b *procBoard) remove(t *Task) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !t.spare {
		return
	}
	t.spare = false
	b.n--
	if b.n > 0 {
		return
	}
	if !b.foreign && b.procs(0) == b.set {
		b.procs(b.base)
	}
	b.foreign = false
}

// count returns the tasks counted and GOMAXPROCS before the first.
func (b *procBoard) count() (n, base int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n, b.base
}

// wantSpareProcs reports whether a task starting on rt gets a spare P:
// on a flavor with OS threads, with Options.SpareProcs On, or Auto where
// the spin guard runs (it bounds the runtime spins that spare Ps made
// worse before it existed: docs/GC.md).
func (rt *RT) wantSpareProcs() bool {
	if !rt.traits.OSThreads {
		return false
	}
	switch rt.opts.SpareProcs {
	case On:
		return true
	case Off:
		return false
	}
	if !rt.info.RealTime {
		return false
	}
	s := &rt.spin
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.guard != nil
}

// takeProcs counts t, starting, and every other task of rt not yet
// started, on the spare-P board (its first Start raises GOMAXPROCS for
// the whole set, before any of it runs).
func (rt *RT) takeProcs(t *Task) {
	rt.mu.Lock()
	ts := make([]*Task, 0, len(rt.tasks)+1)
	ts = append(ts, t)
	for _, o := range rt.tasks {
		if o != t && o.state.Load() == stateCreated {
			ts = append(ts, o)
		}
	}
	rt.mu.Unlock()
	if note := spareProcs.add(ts); note != "" {
		rt.spareNote(note)
	}
}

// giveBackProc uncounts t on the spare-P board, once.
func (t *Task) giveBackProc() { spareProcs.remove(t) }

// spareNote logs, once per RT, why GOMAXPROCS was left alone.
func (rt *RT) spareNote(note string) {
	if rt.spareNoted.CompareAndSwap(false, true) {
		rt.logger.Info("spare Ps: " + note + " (Options.SpareProcs)")
	}
}
