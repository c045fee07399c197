package rtapi

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// Spare Ps (Options.SpareProcs): GOMAXPROCS is raised by one for each
// running task, so that a task thread waking from its sleep finds an idle
// P instead of waiting for a SCHED_OTHER thread of the runtime to hand it
// one. docs/GC.md ("Spare Ps") has the mechanism and the measurements.

// procBoard counts the Ps rtapi added to GOMAXPROCS. There is one for the
// process (spareProcs), since GOMAXPROCS is the process's, shared by every
// RT.
type procBoard struct {
	mu     sync.Mutex
	procs  func(int) int       // runtime.GOMAXPROCS
	getenv func(string) string // os.Getenv
	base   int                 // GOMAXPROCS before the first spare P
	n      int                 // spare Ps counted and not given back
	// foreign: GOMAXPROCS was changed behind the board, which leaves it
	// alone until every counted task has ended.
	foreign bool
}

var spareProcs = procBoard{procs: runtime.GOMAXPROCS, getenv: os.Getenv}

// add counts a starting task and raises GOMAXPROCS by one. It returns
// whether the task was counted (it must then call remove when it ends),
// and why GOMAXPROCS was left alone, or "" when it was raised.
func (b *procBoard) add() (counted bool, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v := b.getenv("GOMAXPROCS"); v != "" {
		return false, "GOMAXPROCS=" + v + " in the environment is left alone"
	}
	cur := b.procs(0)
	if b.n == 0 {
		b.base, b.foreign = cur, false
	} else if cur != b.base+b.n {
		b.foreign = true
	}
	b.n++
	if b.foreign {
		return true, fmt.Sprintf("GOMAXPROCS was changed to %d by the program and is left alone", cur)
	}
	b.procs(b.base + b.n)
	return true, ""
}

// remove gives back the spare P of a task that add counted, as it ends.
func (b *procBoard) remove() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		return
	}
	b.n--
	if !b.foreign && b.procs(0) != b.base+b.n+1 {
		b.foreign = true
	}
	if !b.foreign {
		b.procs(b.base + b.n)
	}
	if b.n == 0 {
		b.foreign = false
	}
}

// count returns the spare Ps counted and GOMAXPROCS before the first.
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

// giveBackProc gives back t's spare P, once.
func (t *Task) giveBackProc() {
	if t.spare {
		t.spare = false
		spareProcs.remove()
	}
}

// spareNote logs, once per RT, why GOMAXPROCS was left alone.
func (rt *RT) spareNote(note string) {
	if rt.spareNoted.CompareAndSwap(false, true) {
		rt.logger.Info("spare Ps: " + note + " (Options.SpareProcs)")
	}
}
