package rtapi

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	"go.uber.org/zap"
)

// runtimeWriteBarrier is the flag the compiler's write-barrier checks
// read. The runtime sets it while a GC cycle marks: from sweep termination
// to mark termination, the phase with mark assists and GC workers. The
// runtime keeps the symbol and its layout for packages that link to it
// (go.dev/issue/67401), so reading it is stable across Go releases.
//
//go:linkname runtimeWriteBarrier runtime.writeBarrier
var runtimeWriteBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

// gcMarking reports whether a garbage-collection cycle is marking right
// now: one byte load, no call into the runtime.
// RT-safe.
func gcMarking() bool { return runtimeWriteBarrier.enabled }

// GCMarking reports whether a garbage-collection cycle of this process is
// in its mark phase right now (between the two stop-the-world pauses of a
// cycle). A task body may read it, for instance to postpone optional work
// while the collector runs.
// RT-safe.
func GCMarking() bool { return gcMarking() }

// The GC shield (TaskSpec.GCShield): HACKING.md, "Why a raw sleep keeps
// the P", has the design; docs/GC.md the costs and measurements.

// shieldChoice resolves TaskSpec.GCShield against the instance's default
// (Options.GCShield): the task's own On or Off, else the instance's. Auto
// left over offers the shield on real-time flavors, as far as the Ps allow.
func shieldChoice(spec TaskSpec, instance Toggle) Toggle {
	if spec.GCShield == Auto {
		return instance
	}
	return spec.GCShield
}

// shieldRaw resolves TaskSpec.GCShield on a flavor, given the instance's
// default (Options.GCShield): whether the task sleeps raw.
func shieldRaw(spec TaskSpec, realTime bool, instance Toggle) bool {
	switch shieldChoice(spec, instance) {
	case On:
		return true
	case Off:
		return false
	}
	return realTime
}

// GCShieldMinPeriod is the shortest period GCShield Auto shields. A task
// with a shorter period keeps a P busy whether it is shielded or not, so
// it counts against the Ps the shield hands out. A raw sleeper is
// preempted by the Go runtime every 10-20 ms, a round trip through another
// thread that so short a period cannot hide. docs/GC.md ("Several tasks")
// has the measurements.
const GCShieldMinPeriod = 500 * time.Microsecond

// taskShield is one task's part of its RT's shield board.
type taskShield struct {
	want   bool        // resolved at start: shieldRaw, nanosleep wake
	forced bool        // GCShield On on a nanosleep wait: never given up
	raw    atomic.Bool // the board's decision, read by the task once per cycle
	note   string      // Stats.GCShield; guarded by shieldBoard.mu
}

// shieldBoard hands out the Ps an RT's tasks may keep while they sleep.
type shieldBoard struct {
	mu      sync.Mutex
	members []*Task // running periodic tasks, in start order
	frozen  bool    // RT.Close has begun: tasks still leave, nothing is handed out
}

// freeze stops the board handing out Ps: RT.Close calls it before it
// stops the set one task after another, so that a task ending first does
// not give its P to one that is about to stop (whose Stats.GCShield would
// then read "on" for a run it spent unshielded). Members still leave;
// each keeps the decision it had while the set ran.
func (b *shieldBoard) freeze() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frozen = true
}

// join resolves t's wish for the shield, adds a periodic task to the board
// and hands out the Ps again. Called on the task's thread before its first
// cycle; it returns whether t sleeps raw to begin with.
func (b *shieldBoard) join(t *Task, wake WakeMode, logger *zap.Logger) bool {
	sh := &t.shield
	asked := shieldChoice(t.spec, t.rt.opts.GCShield) == On
	// Only a nanosleep wait can keep its P: a timer wake asking for the
	// shield is no claim on one.
	sh.forced = asked && wake == WakeNanosleep
	sh.want = wake == WakeNanosleep && shieldRaw(t.spec, t.rt.info.RealTime, t.rt.opts.GCShield)
	b.mu.Lock()
	defer b.mu.Unlock()
	sh.note = shieldOffNote(t.spec, wake)
	if t.spec.Period == 0 {
		return false
	}
	if asked && !sh.forced {
		logger.Warn("GC shield", zap.String("task", t.spec.Name), zap.String("shield", sh.note))
	}
	if b.frozen {
		if sh.want {
			sh.note = "off: the RT was closing when the task started"
		}
		return false // Close stops it at once: not worth a P
	}
	b.members = append(b.members, t)
	b.assign(runtime.GOMAXPROCS(0), logger)
	return sh.raw.Load()
}

// leave takes t off the board when its task ends and gives its P to the
// next task in line, unless the board is frozen (RT.Close).
func (b *shieldBoard) leave(t *Task, logger *zap.Logger) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.members, t)
	if i < 0 {
		return
	}
	b.members = slices.Delete(b.members, i, i+1)
	t.shield.raw.Store(false)
	if !b.frozen {
		b.assign(runtime.GOMAXPROCS(0), logger)
	}
}

// assign hands out the Ps (decideShields) to the members and logs a
// warning for each task that wanted the shield and newly goes without it.
// Called with b.mu held.
func (b *shieldBoard) assign(procs int, logger *zap.Logger) {
	cands := make([]shieldCandidate, len(b.members))
	for i, t := range b.members {
		sh := &t.shield
		cands[i] = shieldCandidate{Period: t.spec.Period, Priority: t.spec.Priority, Want: sh.want, Forced: sh.forced,
			Stopping: t.stopping(), Raw: sh.raw.Load(), Note: sh.note}
	}
	for i, v := range decideShields(procs, cands) {
		t, sh := b.members[i], &b.members[i].shield
		sh.raw.Store(v.Raw)
		sh.note = v.Note
		if (v.Raw != cands[i].Raw || v.Note != cands[i].Note) && sh.want && v.Note != "on" {
			logger.Warn("GC shield", zap.String("task", t.spec.Name), zap.String("shield", v.Note))
		}
	}
}

// shieldCandidate is what the shield decision knows of one periodic task.
type shieldCandidate struct {
	Period   time.Duration
	Priority int
	Want     bool   // offered the shield: a nanosleep wait, GCShield resolved on
	Forced   bool   // GCShield On on a nanosleep wait: served regardless
	Stopping bool   // told to stop, not ended yet
	Raw      bool   // the decision it has now
	Note     string // Stats.GCShield now
}

// shieldVerdict is one task's decision: whether it sleeps raw, and what
// Stats.GCShield says.
type shieldVerdict struct {
	Raw  bool
	Note string
}

// decideShields returns, for each candidate (in start order), whether it
// keeps its P while it sleeps, with procs Ps. One P is kept for the rest
// of the program; each task with a period under GCShieldMinPeriod keeps
// one busy anyway; forced tasks take theirs regardless; the Ps left go to
// the wanting tasks by shortest period, highest priority, start order. A
// task told to stop keeps its decision and what it holds (a P it sleeps
// on, or the one a fast task keeps busy) until it has ended, so a set
// that stops one task after another hands out nothing it did not have
// while it ran; RT.Close, which stops its set that way, freezes the board
// first (shieldBoard.freeze). A task that does not want the shield keeps
// its note.
func decideShields(procs int, cands []shieldCandidate) []shieldVerdict {
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		x, y := &cands[i], &cands[j]
		switch {
		case x.Forced != y.Forced:
			if x.Forced {
				return -1
			}
			return 1
		case x.Period != y.Period:
			return cmp.Compare(x.Period, y.Period)
		}
		return cmp.Compare(y.Priority, x.Priority)
	})
	out := make([]shieldVerdict, len(cands))
	free := procs - 1 // Ps that may be held, leaving one for the rest
	forced, busy := 0, 0
	for _, i := range order {
		c := &cands[i]
		short := c.Period < GCShieldMinPeriod
		switch {
		case c.Stopping && c.Raw:
			free-- // keeps what it has until it ends
		case c.Stopping && !short:
			// holds nothing, and gets nothing now
		case c.Forced:
			forced++
		case short:
			busy++ // a fast task keeps its P busy, raw or not
		}
	}
	free -= busy
	for _, i := range order {
		c := &cands[i]
		v := shieldVerdict{Raw: c.Raw, Note: c.Note}
		switch {
		case c.Stopping:
			// about to end: not worth a P, and its Stats keep what it had
		case c.Forced:
			free-- // may go below zero: forced tasks are served regardless
			v = shieldVerdict{Raw: true, Note: "on"}
			if forced+busy > procs-1 {
				v.Note = fmt.Sprintf("on, forced; but %d forced tasks keep their P while they sleep and %d with periods under %v "+
					"keep one busy, with GOMAXPROCS %d: the rest of the program runs only when the Go runtime preempts one of them "+
					"(raise GOMAXPROCS or use GCShield Auto)", forced, busy, GCShieldMinPeriod, procs)
			}
		case !c.Want:
			v.Raw = false
		case c.Period < GCShieldMinPeriod:
			v = shieldVerdict{Note: fmt.Sprintf("off: period under %v (the Go runtime's forced preemption of a task that keeps its P, "+
				"every 10-20 ms, costs more than such a short sleep risks; GCShield On forces it)", GCShieldMinPeriod)}
		case free > 0:
			free--
			v = shieldVerdict{Raw: true, Note: "on"}
		default:
			v = shieldVerdict{Note: fmt.Sprintf("off: GOMAXPROCS %d, one P kept for the rest of the program, %d kept busy by tasks with "+
				"periods under %v, %d by forced ones; the rest went to shorter periods or higher priorities "+
				"(raise GOMAXPROCS to shield more)", procs, busy, GCShieldMinPeriod, forced)}
		}
		out[i] = v
	}
	return out
}

// stopping reports whether Stop was called on t.
func (t *Task) stopping() bool { return t.ctl.Load()&ctlStop != 0 }

// shieldOffNote says why a task does not ask for the shield.
func shieldOffNote(spec TaskSpec, wake WakeMode) string {
	switch {
	case spec.Period == 0:
		return "off: not periodic"
	case wake != WakeNanosleep:
		return "off: only the nanosleep wake mode can keep its P, not " + wake.String()
	case spec.GCShield == Off:
		return "off: GCShield Off"
	}
	return "off: not a real-time flavor, or Options.GCShield Off (RTAPI_GC_SHIELD=off)"
}

// followShield makes the task's next sleep raw or not, as the board last
// decided, with one atomic load. Called once per cycle before the sleep.
// RT-safe.
func (tc *TaskContext) followShield() {
	if raw := tc.task.shield.raw.Load(); raw != tc.raw {
		tc.raw = raw
		tc.waker.SetRawSleep(raw)
	}
}

// shieldNote is what Stats.GCShield shows.
func (t *Task) shieldNote() string {
	t.rt.shields.mu.Lock()
	defer t.rt.shields.mu.Unlock()
	return t.shield.note
}
