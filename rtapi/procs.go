package rtapi

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// A P per task, the runtime guard's first step (docs/GC.md, "The runtime
// guard"): GOMAXPROCS one higher per task. A task sleeps in a system
// call, where its P stays attached unless the scheduler takes it; then
// the wake-up finds an idle one, since no other goroutine needs it.
// Setting GOMAXPROCS stops the world, so it changes only while no counted
// task runs, where it can: at a set's first Start, raised for every task
// of the set, and after its last task ends, when all are given back.

// procBoard counts the tasks holding a spare P; one per process
// (spareProcs), shared by every RT. mu guards each task's spare field.
type procBoard struct {
	mu      sync.Mutex
	procs   func(int) int       // runtime.GOMAXPROCS
	getenv  func(string) string // os.Getenv
	base    int                 // GOMAXPROCS before the first spare P
	n       int                 // tasks counted and not ended
	set     int                 // GOMAXPROCS as the board last left it
	foreign bool                // GOMAXPROCS changed behind the board: left alone until n is 0
}

var spareProcs = procBoard{procs: runtime.GOMAXPROCS, getenv: os.Getenv}

// add counts each task of ts not yet counted or started, and raises
// GOMAXPROCS to base plus the count if below. It returns why GOMAXPROCS
// was left alone, or "".
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
		// Under mu: a Stop of a task not started sets its state before
		// remove, so a task is counted only if its remove is to come.
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

// remove uncounts t; the last one gives the spare Ps back.
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

// wantSpareProcs reports whether a task starting on rt gets a spare P:
// under the runtime guard, once its process runs (it bounds the
// livelocks spare Ps cause, docs/GC.md).
func (rt *RT) wantSpareProcs() bool { return rt.guardOn() && rt.runningGuard() != nil }

// takeProcs counts t and every task of rt not yet started on the
// spare-P board, so that a set's first Start raises GOMAXPROCS for all.
// It returns why t holds no P of its own, or "".
func (rt *RT) takeProcs(t *Task) (note string) {
	if !rt.wantSpareProcs() {
		if rt.guardOn() {
			return "the guard process does not run"
		}
		return "the runtime guard is off (not a real-time flavor, or Options.RuntimeGuard Off)"
	}
	rt.mu.Lock()
	ts := make([]*Task, 0, len(rt.tasks)+1)
	ts = append(ts, t)
	for _, o := range rt.tasks {
		if o != t && o.state.Load() == stateCreated {
			ts = append(ts, o)
		}
	}
	rt.mu.Unlock()
	if note = spareProcs.add(ts); note != "" {
		rt.spareNote(note)
	}
	return note
}

// giveBackProc uncounts t on the spare-P board, once.
func (t *Task) giveBackProc() { spareProcs.remove(t) }

// ownPNote is Stats.OwnP for procs, why the task holds no P of its own
// ("" when it does).
func ownPNote(procs string) string {
	if procs == "" {
		return "yes"
	}
	return "no: " + procs
}

// spareNote logs, once per RT, why GOMAXPROCS was left alone.
func (rt *RT) spareNote(note string) {
	if rt.spareNoted.CompareAndSwap(false, true) {
		rt.logger.Info("spare Ps: " + note + " (docs/GC.md, \"Spare Ps\")")
	}
}

// ownPNote is what Stats.OwnP shows: "" before the task starts.
func (t *Task) ownPNote() string {
	if p := t.ownP.Load(); p != nil {
		return *p
	}
	return ""
}
